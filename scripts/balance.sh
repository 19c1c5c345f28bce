#!/usr/bin/env bash
# The simulations behind docs/BALANCE.md: reports (JSON) and charts (PNG)
# into docs/balance/. Run from the repository root with the virtualenv on
# the PATH (or `./dev strata …`). Usage: scripts/balance.sh [GAME_TYPE…]
# (default: every game). SCALE=0.1 runs a tenth of the games, for a quick look;
# reports already in docs/balance/ are kept unless FRESH=1.
set -euo pipefail
out=docs/balance
seed=balance
scale=${SCALE:-1}
mkdir -p "$out"

n() { python -c "print(max(1, round($1 * $scale)))"; }

sim() {  # sim NAME GAMES ARGS…
  local name=$1 games=$2
  shift 2
  if [ -z "${FRESH:-}" ] && [ -f "$out/$name.json" ]; then
    echo "balance.sh: keeping $out/$name.json" >&2
    return
  fi
  strata simulate --games "$(n "$games")" --seed "$seed" \
    --report "$out/$name.json" --plot "$out/$name" "$@"
}

games=("$@")
[ ${#games[@]} -gt 0 ] || games=(dinosaurs_extinct happy_little_dinosaurs cubosaurs escaping_extinction)

for game in "${games[@]}"; do
  case $game in
    dinosaurs_extinct)
      for p in 2 3 4; do
        sim "de-$p" 2000 --game dinosaurs_extinct --players "$p" --bots heuristic
      done
      sim de-4-heuristic-vs-random 2000 --game dinosaurs_extinct --players 4 \
        --bots heuristic,random --rotate ;;
    happy_little_dinosaurs)
      for p in 2 3 4; do
        sim "hld-$p" 1000 --game happy_little_dinosaurs --players "$p" --bots heuristic
      done
      # The seat edge with and without the acting order: each seed both ways.
      sim hld-3-acting-order 1000 --game happy_little_dinosaurs --players 3 \
        --bots heuristic --acting-order both
      # Every dinosaur in every seat: four rotations of the default order.
      order=(NERVOUS_REX BAD_LUCK_BRONTO CRY_CERATOPS STEGO)
      for r in 0 1 2 3; do
        rotated=$(python -c "import json,sys; o=sys.argv[1:]; print(json.dumps(o[$r:]+o[:$r]))" "${order[@]}")
        sim "hld-4-rotation-$r" 500 --game happy_little_dinosaurs --players 4 \
          --bots heuristic --option "dinosaurs=$rotated"
      done
      sim hld-4-heuristic-vs-random 1000 --game happy_little_dinosaurs --players 4 \
        --bots heuristic,random --rotate ;;
    cubosaurs)
      for p in 2 3 4 5; do
        sim "cubosaurs-$p" 400 --game cubosaurs --players "$p" --bots heuristic
      done
      sim cubosaurs-3-advanced 400 --game cubosaurs --players 3 --bots heuristic \
        --option advanced=true
      sim cubosaurs-4-heuristic-vs-random 400 --game cubosaurs --players 4 \
        --bots heuristic,random --rotate ;;
    escaping_extinction)
      for p in 1 2 3 4; do
        sim "ee-$p" 500 --game escaping_extinction --players "$p" --bots heuristic
      done
      sim ee-4-random 500 --game escaping_extinction --players 4 --bots random ;;
    *) echo "balance.sh: unknown game $game" >&2; exit 2 ;;
  esac
done
