// Dinosaurs Extinct?: the track, the Dinos on it, their Life Cards, the
// Earth Event stack; labels of the commands and the log in words.

import { cardBox, enumWords, h, table } from "../dom.js";

const SPACES = {
  SPACE_PREHISTORIC_ERA: ["Prehistoric Era", "start"],
  SPACE_FOOTPRINT: ["Footprint", "·"],
  SPACE_EARTH_EVENT: ["Earth Event", "!"],
  SPACE_NO_BONES_ON_ME: ["No Bones on Me", "+"],
  SPACE_DINO_SWITCH: ["Dino Switch", "⇄"],
  SPACE_TIME_WARP: ["Time Warp", "∞"],
  SPACE_TWENTY_FIRST_CENTURY: ["21st Century", "finish"],
};

function dino(ctx, seat) {
  return (ctx.view.dinos || []).find((d) => (d.seat || 0) === seat) || {};
}

function dinoName(ctx, seat) {
  const d = dino(ctx, seat);
  return `${ctx.who(seat)}'s ${d.name || "Dino"}`;
}

function spaceName(ctx, step) {
  const space = (ctx.view.board || [])[step || 0];
  return `step ${step || 0}${space ? ` (${SPACES[space][0]})` : ""}`;
}

const PURPOSES = {
  ROLL_PURPOSE_MOVE: "to move",
  ROLL_PURPOSE_EARTH_EVENT: "against the Earth Event",
  ROLL_PURPOSE_CHALLENGE: "in the Dino Challenge",
};

export default {
  title: "Dinosaurs Extinct?",

  /** The rules in brief, behind the page's help link. */
  help(ctx) {
    const events = ((ctx.content || {}).earth_events || {}).cards || [];
    return [
      "Roll the die and move along the track from the Prehistoric Era towards the 21st Century; the Earth Event, \"No Bones on Me\", Dino Switch and Time Warp spaces act when landed on (the log says how).",
      "An Earth Event must be survived: the die must roll higher than its number.",
      events.length ? `Earth Events: ${events.map((e) => `${e.name} (${e.number})`).join(", ")}.` : "",
    ].filter(Boolean);
  },

  status(ctx) {
    const v = ctx.view;
    if (v.phase === "PHASE_CHOOSE_SWITCH") return "A Dino Switch is waiting for its choice.";
    if (v.phase === "PHASE_ROLL") return `${ctx.who(v.turn || 0)} rolls next.`;
    return enumWords(v.phase, "PHASE_");
  },

  hand(ctx) {
    const cards = ctx.you.map((seat) => {
      const d = dino(ctx, seat);
      const bones = d.bones || 0;
      return cardBox(
        `dino-${seat}`,
        d.name || "Your Dino",
        bones
          ? `${bones} of ${ctx.view.lifeCardOverlays || 0} bones showing on the Life Card: with all of them the Dino goes extinct. Land on "No Bones on Me" to recharge.`
          : "Alive and well: no bones showing. Reach the 21st Century with no bones to win.",
        `on ${spaceName(ctx, d.step)}, heading ${enumWords(d.heading, "HEADING_").toLowerCase()}`,
      );
    });
    return { title: "Your Dino", body: h("div", { class: "cards" }, cards) };
  },

  board(ctx) {
    const v = ctx.view;
    const board = v.board || [];
    const cells = board.map((space, step) => {
      const here = (v.dinos || []).filter((d) => (d.step || 0) === step);
      const [name, mark] = SPACES[space] || [space, "?"];
      return h(
        "div",
        { class: `space ${space.toLowerCase()}`, title: `${step}: ${name}`, dataset: { step } },
        h("div", { class: "space-number" }, String(step)),
        h("div", { class: "space-mark" }, mark),
        here.map((d) =>
          h("span", { class: `token ${d.colour || ""}`, title: d.name }, (d.name || "?")[0]),
        ),
      );
    });
    const last = v.lastEarthEvent;
    return h(
      "div",
      {},
      h("div", { class: "track" }, cells),
      h(
        "p",
        { class: "legend" },
        "· Footprint   ! Earth Event   + No Bones on Me   ⇄ Dino Switch   ∞ Time Warp",
        (v.timeWarp || []).length ? ` (the warp joins steps ${(v.timeWarp || []).join(" and ")})` : "",
      ),
      h(
        "p",
        {},
        `Earth Event stack: ${v.earthEventsInStack || 0} cards.`,
        last && last.name ? ` Last drawn: ${last.name} (beat ${last.number || 0}).` : "",
      ),
    );
  },

  players(ctx) {
    return table(
      ["Seat", "Dino", "Step", "Bones", "Heading"],
      (ctx.view.dinos || []).map((d) => [
        ctx.who(d.seat || 0),
        d.name,
        spaceName(ctx, d.step),
        `${d.bones || 0} of ${ctx.view.lifeCardOverlays || 0}`,
        enumWords(d.heading, "HEADING_"),
      ]),
    );
  },

  label(key, c, ctx) {
    switch (key) {
      case "rollDie":
        return "Roll the die";
      case "switchWith": {
        const t = c.targetSeat || 0;
        return `Switch places with ${dinoName(ctx, t)} (on ${spaceName(ctx, dino(ctx, t).step)})`;
      }
      default:
        return "";
    }
  },

  describe(key, e, ctx) {
    const who = (seat) => dinoName(ctx, seat || 0);
    switch (key) {
      case "earthEventsShuffled":
        return `The ${e.cards || 14} Earth Event cards were shuffled.`;
      case "dieRolled":
        return `${who(e.seat)} rolled a ${e.value || 0} ${PURPOSES[e.purpose] || ""}.`;
      case "dinoMoved":
        return `${who(e.seat)} moved ${enumWords(e.heading, "HEADING_").toLowerCase()} from ${spaceName(ctx, e.fromStep)} to ${spaceName(ctx, e.toStep)}.`;
      case "dinoEnteredTwentyFirstCentury":
        return `${who(e.seat)} entered the 21st Century!`;
      case "dinoLeftRace":
        return `${who(e.seat)} left the race: its player left the game.`;
      case "dinoSwitchLapsed":
        return `${who(e.seat)}'s Dino Switch lapsed: its player left the game.`;
      case "lifeCardRecharged":
        return `${who(e.seat)} landed on No Bones on Me: its Life Card is recharged.`;
      case "earthEventDrawn":
        return `${who(e.seat)} drew the Earth Event "${e.name}": roll higher than ${e.number || 0}.`;
      case "earthEventSurvived":
        return `${who(e.seat)} survived the Earth Event.`;
      case "overlayFlipped":
        return `${who(e.seat)} flipped an overlay: ${e.bones || 0} bone${e.bones === 1 ? "" : "s"} showing.`;
      case "dinoWentExtinct":
        return `${who(e.seat)} went extinct and starts again at the Prehistoric Era.`;
      case "dinoChallengeBegan":
        return `${who(e.seat)} challenged ${(e.defenders || []).map(who).join(", ")} on step ${e.step || 0}.`;
      case "dinoChallengeTied":
        return `A tie: ${(e.seats || []).map(who).join(", ")} roll again.`;
      case "dinoChallengeWon":
        return `${who(e.seat)} won the Dino Challenge.`;
      case "dinoPushedBack":
        return `${who(e.seat)} was pushed back from step ${e.fromStep || 0} to step ${e.toStep || 0}.`;
      case "dinoSwitchReached":
        return `${who(e.seat)} reached a Dino Switch on step ${e.step || 0}.`;
      case "dinosSwitched":
        return `${who(e.seat)} switched places with ${who(e.targetSeat)}.`;
      case "dinoWarped":
        return `${who(e.seat)} went through the Time Warp from step ${e.fromStep || 0} to step ${e.toStep || 0}.`;
      case "turnPassed":
        return `It is ${ctx.who(e.seat || 0)}'s turn.`;
      default:
        return undefined;
    }
  },
};
