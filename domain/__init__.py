"""The rules of Strata's games: pure Python, standard library only.

Each game lives in its own package (``domain/<game_type>/``) and exposes one
object that satisfies :class:`domain.rules.GameRules`. ``domain.session``
wraps any game in the lifecycle every game shares (created, seats joined,
started, finished), and ``domain.registry`` lists the games.
"""
