"""Numbers of the game: XP curve, hit points, combat level, hit chance and damage.

All formulas live here so that content authors can calibrate mobs and items against one place:

- max HP = 10 + 5 * health level (health 1: 15 HP, health 10: 60 HP, health 50: 260 HP);
- combat level = (accuracy + strength + defense + health + max(magic, archery)) // 5, at least 1;
- hit chance = (attack + 8) / (attack + defence + 16), clamped to [0.05, 0.95], where attack is the
  attacker's accuracy (level + item bonus) and defence the defender's defense (level + item bonus);
- an agent's max hit = 1 + (style level + style bonus) // 3, style = strength (melee), archery (ranged)
  or magic (magic); a mob's max hit is its ``attack``; a hit deals uniform 1..max hit;
- a gathering tool of tier T adds one extra unit of a node's main yield with chance 0.15 * (T - 1), at most
  0.6, per gather (tier 1: none).
"""

from __future__ import annotations

from .models import XpCurve


class XpTable:
    """Level <-> XP conversion for one XP curve (precomputed thresholds)."""

    def __init__(self, curve: XpCurve):
        self.max_level = curve.max_level
        # thresholds[L] = xp needed to reach level L; index 0 unused, level 1 is 0 xp
        self.thresholds = [0, 0] + [round(curve.base * (lv - 1) ** curve.exponent) for lv in range(2, curve.max_level + 1)]

    def xp_for(self, level: int) -> int:
        level = max(1, min(level, self.max_level))
        return self.thresholds[level]

    def level_for(self, xp: int) -> int:
        lo, hi = 1, self.max_level
        while lo < hi:  # largest level whose threshold <= xp
            mid = (lo + hi + 1) // 2
            if self.thresholds[mid] <= xp:
                lo = mid
            else:
                hi = mid - 1
        return lo


def max_hp(health_level: int) -> int:
    return 10 + 5 * health_level


def combat_level(levels: dict[str, int]) -> int:
    total = (levels.get("accuracy", 1) + levels.get("strength", 1) + levels.get("defense", 1)
             + levels.get("health", 1) + max(levels.get("magic", 1), levels.get("archery", 1)))
    return max(1, total // 5)


def hit_chance(attack: int, defence: int) -> float:
    attack, defence = max(0, attack), max(0, defence)
    return min(0.95, max(0.05, (attack + 8) / (attack + defence + 16)))


def kill_chance(attack: int, hit: float, hp: int, strikes: int = 2) -> float:
    """The chance that ``strikes`` strikes of a mob (each a hit with chance ``hit``, then 1..``attack``
    damage, as ``Combat._strike`` rolls them) take a player from ``hp`` to 0. Two is what a walk stopped at a
    mob's range takes before its walker can act again: the engaging strike and the end-of-round one."""
    alive = {hp: 1.0}  # hp left -> chance
    dead = 0.0
    for _ in range(strikes):
        nxt: dict[int, float] = {}
        for left, pr in alive.items():
            nxt[left] = nxt.get(left, 0.0) + pr * (1 - hit)
            for dmg in range(1, max(1, attack) + 1):
                q = pr * hit / max(1, attack)
                if dmg >= left:
                    dead += q
                else:
                    nxt[left - dmg] = nxt.get(left - dmg, 0.0) + q
        alive = nxt
    return dead


def agent_max_hit(style_level: int, style_bonus: int) -> int:
    return 1 + max(0, style_level + style_bonus) // 3


def tool_bonus_chance(tier: int) -> float:
    return min(0.6, 0.15 * max(0, tier - 1))


STYLE_SKILL = {"melee": "strength", "ranged": "archery", "magic": "magic"}
