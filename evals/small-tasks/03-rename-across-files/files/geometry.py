def calc_area(width, height):
    return width * height
