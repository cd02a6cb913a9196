"""Docstrings that read plainly in ``help()`` and still link in the Sphinx docs.

The sources write Sphinx roles (``:func:`fast_pamst```, ``:ref:`design-sampler```)
so that the HTML documentation links them, but ``help()``, Jupyter's ``?`` and
IDEs show ``__doc__`` as it is, where a role is noise. So the package's import
calls :func:`plain_docstrings`, which rewrites the ``__doc__`` of the package's
modules, functions, classes, methods and properties with every role rendered as
plain text (``fast_pamst()``, ``the "design-sampler" section of the docs``), and
keeps each original in ``SPHINX_DOCS``. ``docs/conf.py`` hands autodoc the
original (:func:`sphinx_doc`, on its ``autodoc-process-docstring`` event), so
the HTML keeps its links.
"""

import inspect
import re
import types

# :role:`text`, with an optional domain (":py:func:") and the "Title <target>" form
_ROLE = re.compile(r":(?:py:)?([a-z]+):`([^`]+)`")
# these render as a call
_CALLABLE = ("func", "meth")

# id(object) -> (object, its docstring as written); the object is kept so the id stays its own
SPHINX_DOCS = {}


def plain_roles(text):
    """``text`` with its Sphinx roles as plain text.

    ``:func:`fastpamst_nb.privacy.approx_dp_to_zcdp``` becomes
    ``fastpamst_nb.privacy.approx_dp_to_zcdp()`` (``~`` keeps the last name only),
    ``:class:`SpanningTree``` becomes ``SpanningTree``, ``:ref:`Title <label>```
    becomes ``Title`` and a bare ``:ref:`label``` becomes ``the "label" section of
    the docs``; ``:math:`x``` keeps ``x``.

    Examples
    --------
    >>> plain_roles("see :func:`~fastpamst_nb.privacy.resolve_rho` and :ref:`design-queue`")
    'see resolve_rho() and the "design-queue" section of the docs'
    """
    def render(match):
        role, body = match.groups()
        title, sep, _ = body.partition(" <")
        if sep and body.endswith(">"):
            return title
        body = body.lstrip("!")
        if body.startswith("~"):
            body = body[1:].rpartition(".")[2]
        if role == "ref":
            return f'the "{body}" section of the docs'
        if role in _CALLABLE and not body.endswith(")"):
            return body + "()"
        return body

    return _ROLE.sub(render, text)


def _rewrite(obj):
    doc = getattr(obj, "__doc__", None)
    if not isinstance(doc, str) or ":`" not in doc:
        return
    plain = plain_roles(doc)
    if plain == doc:
        return
    try:
        obj.__doc__ = plain
    except (AttributeError, TypeError):  # a builtin or slot wrapper: left as it is
        return
    SPHINX_DOCS[id(obj)] = (obj, doc)


def plain_docstrings(modules):
    """Rewrite the docstrings of ``modules`` and of what they define (see the module docstring).

    Only objects defined in one of the package's modules are touched: functions
    (``functools.lru_cache`` wrappers too), classes, and the functions,
    properties, classmethods and staticmethods of those classes. Compiled numba kernels are left alone (their docstrings are
    for developers, read in the sources). Idempotent.
    """
    package = modules[0].__name__.partition(".")[0]
    seen = set()
    for module in modules:
        if module.__name__ == __name__:  # this module's docstrings show roles on purpose
            continue
        _rewrite(module)
        for obj in vars(module).values():
            # functools wrappers (lru_cache) carry the docstring of the function they wrap
            wrapper = callable(obj) and inspect.isfunction(getattr(obj, "__wrapped__", None))
            kind = inspect.isfunction(obj) or inspect.isclass(obj) or wrapper
            if id(obj) in seen or not kind:
                continue
            if getattr(obj, "__module__", "").partition(".")[0] != package:
                continue
            seen.add(id(obj))
            _rewrite(obj)
            if inspect.isclass(obj):
                for member in vars(obj).values():
                    if isinstance(member, (classmethod, staticmethod)):
                        member = member.__func__
                    if isinstance(member, (types.FunctionType, property)):
                        _rewrite(member)


def sphinx_doc(obj):
    """The docstring of ``obj`` as written in the sources (with its roles), or None
    when :func:`plain_docstrings` did not change it."""
    for candidate in (obj, getattr(obj, "__func__", None), getattr(obj, "fget", None)):
        entry = SPHINX_DOCS.get(id(candidate))
        if entry is not None and entry[0] is candidate:
            return entry[1]
    return None
