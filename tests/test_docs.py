"""The documentation's examples run as written (doctest on the pages of docs/ that have some)."""

import doctest
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
PARSER = doctest.DocTestParser()
# pages with at least one ">>>" example; a page without any would make a test that cannot fail
PAGES = [p for p in sorted(DOCS.rglob("*.rst")) if PARSER.get_examples(p.read_text(encoding="utf-8"))]


def test_the_docs_have_examples():
    assert sum(len(PARSER.get_examples(p.read_text(encoding="utf-8"))) for p in PAGES) >= 10


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_doc_page_examples(page):
    result = doctest.testfile(str(page), module_relative=False, verbose=False, report=True,
                              optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {page.name} failed"
