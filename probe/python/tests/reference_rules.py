"""The rules of docs/rules.md transcribed seed by seed, slowly and plainly:
the reference the tests hold awari.Rules to (as dbformat/tests/properties.rs
does the fast move generator)."""

from typing import List, Tuple

RULE_SETS = ["awari", "abapa", "grand-slam-captures", "grand-slam-replay", "cross-wari"]


def sow(pits: List[int], pit: int, rules: str) -> Tuple[int, int, List[int], bool, bool]:
    """(pit, captured, child pits, turn passes, starves) of sowing `pit`."""
    n = len(pits)
    p = n // 2
    seeds = pits[pit]
    b = list(pits)
    b[pit] = 0
    clockwise = rules == "cross-wari" and seeds % 2 == 1
    step = -1 if clockwise else 1
    i = pit
    left = seeds
    while left:
        i = (i + step) % n
        if i == pit:  # the pit sown from is passed over
            continue
        b[i] += 1
        left -= 1
    fed = any(b[p:])
    # Captures: back along the sowing's path while an opponent pit holds 2 or 3.
    after = list(b)
    captured = 0
    j = i
    while p <= j < n and after[j] in (2, 3):
        captured += after[j]
        after[j] = 0
        j -= step
    grand_slam = captured > 0 and not any(after[p:])
    passes = True
    if rules == "awari":
        result, starves = after, grand_slam or not fed
    elif rules in ("abapa", "cross-wari"):
        if grand_slam:
            result, captured, starves = b, 0, False
        else:
            result, starves = after, not fed
    elif rules == "grand-slam-captures":
        result, starves = after, not fed
    elif rules == "grand-slam-replay":
        if grand_slam:
            result, passes, starves = after, False, False
        else:
            result, starves = after, not fed
    else:
        raise ValueError(rules)
    child = result[p:] + result[:p] if passes else result
    return pit, captured, child, passes, starves


def moves(pits: List[int], rules: str) -> List[Tuple[int, int, List[int], bool]]:
    """The legal moves: (pit, captured, child, turn passes), in pit order.
    A move that starves the opponent is dropped when another does not."""
    p = len(pits) // 2
    sown = [sow(pits, k, rules) for k in range(p) if pits[k] > 0]
    if any(not s[4] for s in sown):
        sown = [s for s in sown if not s[4]]
    return [s[:4] for s in sown]
