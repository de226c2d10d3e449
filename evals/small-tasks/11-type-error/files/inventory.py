def restock(counts: dict[str, int], item: str, amount: int) -> dict[str, int]:
    counts[item] = counts.get(item, 0) + amount
    return counts


def total(counts: dict[str, int]) -> int:
    return sum(counts.values())


def report(counts: dict[str, int]) -> str:
    return "total: " + total(counts)
