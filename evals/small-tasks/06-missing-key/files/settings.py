DEFAULTS = {"color": "blue", "size": 3}


def setting(name):
    return DEFAULTS[name]
