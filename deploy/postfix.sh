#!/bin/sh
# As root: mail for pbm@games.example.org goes to the `pbm` pipe transport.
set -eu
cat /srv/pbm/deploy/master.cf >> /etc/postfix/master.cf
cat /srv/pbm/deploy/transport >> /etc/postfix/transport
postmap /etc/postfix/transport
postconf -e "transport_maps = hash:/etc/postfix/transport" "recipient_delimiter = +" \
    "mydestination = $(postconf -h mydestination), games.example.org"
postfix reload
