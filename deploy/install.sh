#!/bin/sh
# As root, with the pbm source in /srv/pbm: a `pbm` system user owns the home and the
# database; the code and the venv stay root's. The venv comes from the system Python,
# which that user can run (a Python under /root or a pyenv is out of its reach). The home
# holds password hashes, addresses and the SMTP password: it is the pbm user's alone
# (0700), made empty, without the shell files of /etc/skel.
set -eu
useradd --system --home-dir /srv/pbm/home --no-create-home --shell /usr/sbin/nologin pbm
install -d -o pbm -g pbm -m 0700 /srv/pbm/home
/usr/bin/python3 -m venv /srv/pbm/.venv
/srv/pbm/.venv/bin/pip install --quiet /srv/pbm
runuser -u pbm -- env PBM_HOME=/srv/pbm/home /srv/pbm/.venv/bin/pbm init
