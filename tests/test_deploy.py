"""The README's deployment section quotes deploy/ verbatim, so following it literally runs
the very files `make e2e` proves on a real Postfix."""

import re
import textwrap

import pytest

from tests.conftest import ROOT

DEPLOY_FILES = sorted(path.name for path in (ROOT / "deploy").iterdir())


def test_every_deployment_file_the_readme_names_exists():
    named = set(re.findall(r"deploy/([\w.-]+\w)", (ROOT / "README.md").read_text()))
    assert named and named <= set(DEPLOY_FILES)


@pytest.mark.parametrize("name", DEPLOY_FILES)
def test_the_readme_quotes_the_file_verbatim(name):
    text = (ROOT / "deploy" / name).read_text()
    quoted = textwrap.indent(text, "    ")
    assert f"\n\n{quoted}" in (ROOT / "README.md").read_text(), (
        f"README.md does not quote deploy/{name}"
    )


def test_the_serve_transport_replaces_only_the_pipe_transport():
    pipe = (ROOT / "deploy" / "transport").read_text().split()
    serve = (ROOT / "deploy" / "transport.serve").read_text().split()
    assert pipe[0] == serve[0]
    assert (pipe[1], serve[1]) == ("pbm:", "smtp:[127.0.0.1]:2525")
