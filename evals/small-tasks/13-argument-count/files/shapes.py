def area(width, height):
    return width * height


def total_area(rectangles):
    """The summed area of (width, height) pairs."""
    return sum(area(r) for r in rectangles)
