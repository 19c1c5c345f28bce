"""Egg Race's printed content: none (a die and a track); the file is here
because every game folder has the same files (docs/ADDING_A_GAME.md)."""
