"""`strata simulate`: the same seed gives the same report, however many
processes play the games; the figures add up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clients import simulate
from clients.cli import main

PLAN = simulate.Plan(
    game_type="happy_little_dinosaurs",
    players=3,
    games=12,
    seed="lab",
    bots=("heuristic", "random"),
    rotate=True,
)


HLD = "happy_little_dinosaurs"


def test_the_same_seed_gives_the_same_report_with_one_or_two_processes():
    one = simulate.dumps(simulate.report(PLAN, simulate.run(PLAN, processes=1)))
    again = simulate.dumps(simulate.report(PLAN, simulate.run(PLAN, processes=1)))
    two = simulate.dumps(simulate.report(PLAN, simulate.run(PLAN, processes=2)))
    assert one == again == two


def test_another_seed_gives_other_games():
    other = simulate.Plan(**{**PLAN.__dict__, "seed": "other"})
    assert simulate.run(PLAN, 1) != simulate.run(other, 1)


def test_the_figures_add_up():
    records = simulate.run(PLAN, processes=1)
    data = simulate.report(PLAN, records, per_game=True)
    assert data["games"] == 12
    wins = sum(s["wins"] for s in data["win_rate_by_seat"].values())
    assert wins == sum(len(r.winners) for r in records)
    assert sum(c["wins"] for c in data["win_rate_by_character"].values()) == wins
    assert sum(b["seats_played"] for b in data["win_rate_by_bot"].values()) == 36
    assert sum(data["results"].values()) == 12
    assert data["length"]["commands"]["min"] <= data["length"]["commands"]["max"]
    assert [g["index"] for g in data["per_game"]] == list(range(12))
    # rotation: each kind sits in each seat
    assert {r.bots for r in records} == {
        ("heuristic", "random", "heuristic"),
        ("random", "heuristic", "random"),
    }


def test_both_acting_orders_play_every_seed_and_report_seats_each_way():
    plan = simulate.Plan(
        **{**PLAN.__dict__, "games": 4, "acting_order": "both", "game_type": HLD}
    )
    records = simulate.run(plan, processes=1)
    assert plan.total == len(records) == 8
    assert [(r.acting_order, r.index) for r in records] == [
        (order, i) for order in ("seat", "random") for i in range(4)
    ]
    by_order = simulate.report(plan, records)["win_rate_by_seat_by_acting_order"]
    assert set(by_order) == {"seat", "random"}
    for order, seats in by_order.items():
        ours = [r for r in records if r.acting_order == order]
        assert sum(s["wins"] for s in seats.values()) == sum(
            len(r.winners) for r in ours
        )
    # The same seeds, another order: another game somewhere.
    seat_games = [(r.winners, r.commands) for r in records[:4]]
    assert seat_games != [(r.winners, r.commands) for r in records[4:]]
    # The seat order is the service's: what the report gave before.
    assert (
        simulate.run(simulate.Plan(**{**plan.__dict__, "acting_order": "seat"}), 1)
        == (records[:4])
    )


def test_a_plan_with_unknown_parts_is_refused():
    for bad in (
        {"acting_order": "youngest"},
        {"game_type": "chess"},
        {"players": 9},
        {"bots": ("oracle",)},
        {"games": 0},
        {"options": {"no_such_option": 1}},
    ):
        plan = simulate.Plan(**{**PLAN.__dict__, **bad})
        with pytest.raises((ValueError, KeyError)):
            plan.check()


def test_the_command_writes_the_report_and_the_charts(tmp_path: Path, capsys):
    report = tmp_path / "report.json"
    charts = tmp_path / "charts"
    args = [
        "simulate",
        "--game",
        "dinosaurs_extinct",
        "--games",
        "6",
        "--players",
        "3",
        "--bots",
        "heuristic,random",
        "--seed",
        "cli",
        "--processes",
        "1",
        "--quiet",
    ]
    assert main([*args, "--report", str(report), "--plot", str(charts)]) == 0
    data = json.loads(report.read_text())
    assert data["game_type"] == "dinosaurs_extinct"
    assert data["results"] == {"reached_21st_century": 6}
    assert sorted(p.name for p in charts.iterdir()) == [
        "game_length.png",
        "results.png",
        "win_rate_by_bot.png",
        "win_rate_by_character.png",
        "win_rate_by_seat.png",
    ]
    capsys.readouterr()
    assert main(args) == 0
    assert capsys.readouterr().out == report.read_text()


def test_the_cooperative_game_reports_the_team_and_how_it_lost():
    plan = simulate.Plan(
        game_type="escaping_extinction", players=2, games=4, seed="team"
    )
    data = simulate.report(plan, simulate.run(plan, processes=1))
    team = data["team"]
    assert 0 <= team["won"] <= 4
    assert team["won"] + sum(team["lost_by"].values()) == 4
    assert set(team["lost_by"]) <= {"meteor_hit_earth", "meteor_deck_empty"}
