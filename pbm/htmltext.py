"""HTML-only mail as plain text (docs/spec/server.md §4.3). Its own module: html.parser costs more
to import than most mail needs."""

import re
from html.parser import HTMLParser


class _HTMLText(HTMLParser):
    """HTML to plain lines: blocks end lines, scripts and quotes are dropped."""

    BLOCKS = {
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "tr",
        "table",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "pre",
        "hr",
        "section",
        "article",
        "header",
        "footer",
        "dd",
        "dt",
    }
    SKIPPED = {"script", "style", "blockquote", "head", "title"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def _end_line(self, always=False):
        if always or (self.parts and not self.parts[-1].endswith("\n")):
            self.parts.append("\n")

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIPPED:
            self.skipping += 1
        elif tag in self.BLOCKS:
            self._end_line(always=tag == "br")

    def handle_startendtag(self, tag, attrs):
        if tag in self.BLOCKS:
            self._end_line(always=tag == "br")

    def handle_endtag(self, tag):
        if tag in self.SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag in self.BLOCKS:
            self._end_line()

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    return "\n".join(line.strip() for line in "".join(parser.parts).split("\n"))
