"""Print the package's size tables: per module, its lines, its longest functions, and
the numba kernels that take more than 12 arguments (issue 28's closing note).

Reads the sources with ``ast`` (nothing is imported, so it runs on any checkout)::

    python docs/scripts/code_tables.py                      # this checkout's fastpamst_nb/
    python docs/scripts/code_tables.py /work/main/fastpamst_nb --longest 3

A function's length is its lines from ``def`` to its last line, docstring and
comments included, decorators not; nested functions are listed under their own
qualified name (``outer.inner``) and also count in their parent's length. A
kernel is a function decorated with ``njit``, ``jit`` or ``jit_only`` (called or
not, ``numba.`` prefix or not); its arguments are all its parameters (``*args``
and ``**kwargs`` count one each).
"""
import argparse
import ast
import os

KERNEL_DECORATORS = {"njit", "jit", "jit_only"}
MANY_ARGS = 12


def _decorator_name(node):
    """``njit`` for ``@njit``, ``@njit(...)``, ``@numba.njit`` and ``@numba.njit(...)``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _arg_count(args):
    return (len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
            + (args.vararg is not None) + (args.kwarg is not None))


def functions(tree):
    """(qualified name, lines, is a kernel, arguments) of every function in ``tree``."""
    out = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                kernel = any(_decorator_name(d) in KERNEL_DECORATORS for d in child.decorator_list)
                out.append((name, child.end_lineno - child.lineno + 1, kernel, _arg_count(child.args)))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def tables(package_dir, longest=3):
    """The rows of the three tables, in module order: (module, lines, functions, kernels
    over MANY_ARGS arguments)."""
    rows = []
    for name in sorted(os.listdir(package_dir)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(package_dir, name), encoding="utf-8") as f:
            source = f.read()
        funcs = functions(ast.parse(source, filename=name))
        top = sorted(funcs, key=lambda f: (-f[1], f[0]))[:longest]
        many = sorted((f for f in funcs if f[2] and f[3] > MANY_ARGS), key=lambda f: (-f[3], f[0]))
        rows.append((name, source.count("\n"), top, many))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("package_dir", nargs="?", default=os.path.join(here, "..", "..", "fastpamst_nb"))
    ap.add_argument("--longest", type=int, default=3, help="functions listed per module (default 3)")
    args = ap.parse_args()
    rows = tables(args.package_dir, args.longest)

    print(f"modules of {os.path.normpath(args.package_dir)}: {len(rows)}, "
          f"{sum(r[1] for r in rows)} lines\n")
    print(f"{'module':<24} {'lines':>6}  longest functions (lines)")
    for name, lines, top, _ in rows:
        print(f"{name:<24} {lines:>6}  " + ", ".join(f"{f[0]} {f[1]}" for f in top))
    print(f"\nnumba kernels with more than {MANY_ARGS} arguments")
    print(f"{'module':<24} {'kernel':<28} {'args':>4}")
    count = 0
    for name, _, _, many in rows:
        for f in many:
            print(f"{name:<24} {f[0]:<28} {f[3]:>4}")
            count += 1
    print(f"{count} kernels")


if __name__ == "__main__":
    main()
