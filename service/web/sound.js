// The optional turn sound: a short beep when it becomes your move, made
// with WebAudio (nothing to download). Off unless the player turns it on;
// the choice is remembered in this browser (localStorage).

import { h } from "./dom.js";

const KEY = "strata.turnSound";
let audio = null;

/** Whether the player turned the sound on. */
export function soundOn() {
  return localStorage.getItem(KEY) === "on";
}

/** The page's audio, made (or woken) on demand: a browser lets a page sound
 * only after a gesture, and turning the sound on is one. */
function audioContext() {
  const Audio = window.AudioContext || window.webkitAudioContext;
  if (!Audio) return null;
  audio = audio || new Audio();
  if (audio.state === "suspended") audio.resume().catch(() => {});
  return audio;
}

/** A short, soft beep (880 Hz, a quarter of a second). */
export function beep() {
  const ac = audioContext();
  if (!ac) return;
  const tone = ac.createOscillator();
  const volume = ac.createGain();
  const now = ac.currentTime;
  tone.type = "sine";
  tone.frequency.value = 880;
  volume.gain.setValueAtTime(0.0001, now);
  volume.gain.exponentialRampToValueAtTime(0.2, now + 0.02);
  volume.gain.exponentialRampToValueAtTime(0.0001, now + 0.25);
  tone.connect(volume);
  volume.connect(ac.destination);
  tone.start(now);
  tone.stop(now + 0.3);
}

/** The toggle: a labelled checkbox, off by default. */
export function soundToggle() {
  return h(
    "label",
    { class: "sound", for: "turn-sound" },
    h("input", {
      type: "checkbox",
      id: "turn-sound",
      checked: soundOn(),
      onchange: (event) => {
        localStorage.setItem(KEY, event.target.checked ? "on" : "off");
        if (event.target.checked) audioContext();
      },
    }),
    " Sound when it is your move",
  );
}
