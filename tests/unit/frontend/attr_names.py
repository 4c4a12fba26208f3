#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""attr_names.py LIBRUNTIME_SRC

Every attribute name the library reads is in attr_schema.c's table, so a
wrong type is refused when a node is read, whichever helper reads the
attribute later. Finds the calls of the readers (vnpu_attr_int() and its
kin, vnpu_node_attr() and the wrappers that take a name) in every .c file
under LIBRUNTIME_SRC and the names in their name arguments; a name
argument without a string literal must be one of WRAPPED (a wrapper
passing its own argument on, or a table whose names are checked here
too). Exit 1 naming each name not in the table, or each call the scan
cannot read.
"""
import os
import re
import sys

# reader -> the positions of its name arguments
READERS = {
    'vnpu_attr_int': (1,), 'vnpu_attr_float': (1,), 'vnpu_attr_str': (1,),
    'vnpu_node_attr': (1,), 'inf_attr_ints': (1,), 'cl_const_ints': (2,),
    'read_scan_axes': (1, 2), 'read_axes': (1, 2), 'read_ints': (1,),
}
# (file, argument) pairs whose names come from elsewhere
WRAPPED = {
    ('model/ir.c', 'name'), ('model/infer.c', 'name'), ('compiler/lower.c', 'attr'),
    ('model/infer_loop.c', 'axes'), ('model/infer_loop.c', 'dirs'),
    ('compiler/unroll.c', 'axes'), ('compiler/unroll.c', 'dirs'),
    ('compiler/conv3d.c', 'name'),
    ('compiler/lower.c', 'm->alpha_name'), ('compiler/lower.c', 'm->beta_name'),
}
# Tables of names read through WRAPPED arguments: file, start of the
# table, the name fields of each entry (0-based).
TABLES = [('compiler/lower.c', 'static const struct act_map act_maps[] = {', (2, 4))]
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*|("(?:[^"\\]|\\.)*")', re.S)


def code(path):
    """The text of @path with its comments blanked (lines kept)."""
    def blank(m):
        return m.group(1) or re.sub(r'[^\n]', ' ', m.group(0))
    return COMMENT.sub(blank, open(path).read())


def schema_names(path):
    text = open(path).read()
    names = set()
    for start in ('static const struct attr_type attrs[] = {', '} op_attrs[] = {'):
        body = text[text.index(start):]
        body = body[:body.index('\n};')]
        names.update(re.findall(r'"([A-Za-z0-9_]+)", [A-Z]+ \}', body))
    return names


def call_args(text, start):
    """The arguments of the call whose '(' is at @start, or None."""
    args, depth, cur, i = [], 0, '', start
    while i < len(text):
        ch = text[i]
        if ch == '"':
            m = LITERAL.match(text, i)
            if not m:
                return None
            cur += m.group(0)
            i = m.end()
            continue
        if ch in '([{':
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif ch in ')]}':
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                return args
        elif ch == ',' and depth == 1:
            args.append(cur.strip())
            cur = ''
            i += 1
            continue
        cur += ch
        i += 1
    return None


def entries(text, start):
    body = text[text.index(start) + len(start):]
    body = body[:body.index('\n};')]
    for m in re.finditer(r'\{', body):
        args = call_args(body, m.start())
        if args:
            yield args


def main():
    src = sys.argv[1]
    known = schema_names(os.path.join(src, 'model', 'attr_schema.c'))
    problems, read = [], set()
    call = re.compile(r'\b(' + '|'.join(READERS) + r')\s*\(')
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith('.c'):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            text = code(path)
            for m in call.finditer(text):
                line = text.count('\n', 0, m.start()) + 1
                args = call_args(text, m.end() - 1)
                # a declaration or definition: its parameters name no attribute
                if args is None or any(a.startswith('const ') for a in args):
                    continue
                for pos in READERS[m.group(1)]:
                    if pos >= len(args):
                        problems.append(f'{rel}:{line}: {m.group(1)}() has no argument {pos}')
                        continue
                    names = LITERAL.findall(args[pos])
                    if not names and (rel, args[pos]) not in WRAPPED:
                        problems.append(f'{rel}:{line}: {m.group(1)}() reads the name '
                                        f"'{args[pos]}': not a literal nor known to this test")
                    read.update((rel, line, n) for n in names)
    for rel, start, fields in TABLES:
        text = open(os.path.join(src, rel)).read()
        for args in entries(text, start):
            for pos in fields:
                read.update((rel, 0, n) for n in LITERAL.findall(args[pos]))
    for rel, line, name in sorted(read):
        if name not in known:
            problems.append(f"{rel}:{line}: attribute '{name}' is read but not in "
                            'attr_schema.c: a wrong type would fall back to the default')
    for p in problems:
        print(p)
    names = {n for _, _, n in read}
    print(f'{len(names)} attribute names read, {len(known)} in the table, '
          f'{len(problems)} problems')
    # the scan must see the readers at all
    if len(names) < 50:
        print('too few names found: the scan is broken')
        return 1
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
