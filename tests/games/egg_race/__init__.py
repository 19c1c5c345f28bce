"""Egg Race's own tests (the toy lives in tests/adding_a_game/egg_race/)."""
