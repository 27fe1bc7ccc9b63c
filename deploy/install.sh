#!/bin/sh
# As root, with the pbm source in /srv/pbm: a `pbm` system user owns the home and the
# database; the code and the venv stay root's. The venv comes from the system Python,
# which that user can run (a Python under /root or a pyenv is out of its reach).
set -eu
useradd --system --home-dir /srv/pbm/home --create-home --shell /usr/sbin/nologin pbm
/usr/bin/python3 -m venv /srv/pbm/.venv
/srv/pbm/.venv/bin/pip install --quiet /srv/pbm
runuser -u pbm -- env PBM_HOME=/srv/pbm/home /srv/pbm/.venv/bin/pbm init
