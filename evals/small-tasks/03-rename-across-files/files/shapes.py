from geometry import calc_area


def square(side):
    return calc_area(side, side)
