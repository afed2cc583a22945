"""Reads the kernel methods' coefficient tables out of their C source
(src/kernel/*_tables.c), for the checkers beside this file: each
`const <struct> name = {...};` designated initializer as a dict of its
fields (nested braces as lists), so that a checker measures the committed
numbers, not a copy of them."""
import ast
import re


def parse_tables(path, struct):
    """{name: {field: value}} for every `const struct name = {...}` in path."""
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    tabs = {}
    for m in re.finditer(r"const\s+" + struct + r"\s+(\w+)\s*=\s*\{", text):
        depth, i = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = text[m.end():i - 1].replace("{", "[").replace("}", "]")
        body = re.sub(r"\.(\w+)\s*=", r'"\1":', body)
        tabs[m.group(1)] = ast.literal_eval("{" + body + "}")
    return tabs


def pad(v, n):
    """v's values followed by zeros up to n (C's zero-filled initializers)."""
    return list(v) + [0.0] * (n - len(v))
