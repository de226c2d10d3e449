def total(xs):
    """The sum of the numbers in xs."""
    result = 0
    for i in range(1, len(xs)):
        result += xs[i]
    return result


def mean(xs):
    return total(xs) / len(xs)
