"""Go's strings.TrimSpace: trims Unicode White_Space as Go's unicode.IsSpace defines it."""

_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def trim_space(value: str) -> str:
    return value.strip(_GO_SPACE)
