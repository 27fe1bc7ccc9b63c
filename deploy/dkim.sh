#!/bin/sh
# As root, after postfix.sh and `apt-get install opendkim opendkim-tools`: OpenDKIM signs
# the mail of games.example.org as a milter of Postfix. The private key stays opendkim's;
# its public half goes into the home (private like all of it), where `pbm check` prints the
# DNS record from it.
set -eu
install -d -o opendkim -g opendkim -m 0700 /etc/dkimkeys
if [ ! -e /etc/dkimkeys/pbm.private ]; then
    opendkim-genkey -D /etc/dkimkeys -d games.example.org -s pbm -b 2048
fi
chown opendkim:opendkim /etc/dkimkeys/pbm.private /etc/dkimkeys/pbm.txt
chmod 0600 /etc/dkimkeys/pbm.private
cp /srv/pbm/deploy/opendkim.conf /etc/opendkim.conf
install -o pbm -g pbm -m 0600 /etc/dkimkeys/pbm.txt /srv/pbm/home/dkim-pbm.txt
postconf -e "smtpd_milters = inet:127.0.0.1:8891" "non_smtpd_milters = inet:127.0.0.1:8891"
postfix reload
