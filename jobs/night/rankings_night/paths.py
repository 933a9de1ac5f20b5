"""Where the package put things; jobs/install.sh writes the real paths over the placeholders.
From a checkout, the placeholders stay and RANKINGS_BIN must be given."""
BINDIR = "@BINDIR@"
SYSCONFDIR = "@SYSCONFDIR@"
CONFIG = f"{SYSCONFDIR}/rankings.conf"
RANKINGS = f"{BINDIR}/rankings"
