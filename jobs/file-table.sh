# shellcheck shell=bash disable=SC2034,SC2154
# (the layout variables are for the callers; `files` and `config` come from them)
# Sourced by jobs/install.sh: the installation layout and the one way it lays
# out (and takes away) a table of templated files. The caller sets `files`
# (entries "SOURCE TARGET MODE"), `links` (entries "LINK TARGET") and `config`
# (the one entry an operator edits) before calling install_files or
# uninstall_files.

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
prefix=${PREFIX:-/usr/local}
sysconfdir=${SYSCONFDIR:-/etc}
destdir=${DESTDIR:-}
bindir=${BINDIR:-$prefix/bin}
pkglibdir=${PKGLIBDIR:-$prefix/lib/rankings}
unitdir=${UNITDIR:-$sysconfdir/systemd/system}
sysusersdir=${SYSUSERSDIR:-$sysconfdir/sysusers.d}
tmpfilesdir=${TMPFILESDIR:-$sysconfdir/tmpfiles.d}
case ${CRON_ACTIVE:-yes} in
    yes) cron_comment= ;;
    no) cron_comment='#' ;;
    *)
        echo "CRON_ACTIVE must be yes or no, not ${CRON_ACTIVE}" >&2
        exit 64
        ;;
esac

# The paths are written into unit files, a crontab line that sh runs, the
# night's paths.py (Python strings) and its help, each with its own quoting rules; a path any
# of them would read differently (a space splits an ExecStart= and the table
# below, "&" sends a cron command to the background, "%" is a systemd
# specifier, "$" expands) is refused before anything is changed.
for layout in PREFIX:"$prefix" SYSCONFDIR:"$sysconfdir" BINDIR:"$bindir" PKGLIBDIR:"$pkglibdir" \
    UNITDIR:"$unitdir" SYSUSERSDIR:"$sysusersdir" TMPFILESDIR:"$tmpfilesdir"; do
    path=${layout#*:}
    if [[ $path != /* || $path == *[!ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+,:-]* ]]; then
        echo "${layout%%:*}=$path: an installation path must be absolute and made of letters, digits and _ . / + , : - only" >&2
        exit 64
    fi
done
unset layout path

# Templates name installation paths as @BINDIR@ and the like, so the
# installed files point at where things really went and need no editing.
# Replaced by bash, not sed, so no character of a path is ever syntax.
render() {
    local text
    IFS= read -r -d '' text <"$root/$1" || true
    text=${text//@BINDIR@/"$bindir"}
    text=${text//@PKGLIBDIR@/"$pkglibdir"}
    text=${text//@SYSCONFDIR@/"$sysconfdir"}
    text=${text//@CRON_COMMENT@/"$cron_comment"}
    printf '%s' "$text"
}

# Only a real install may change the running system.
live() { [[ -z $destdir ]]; }
systemd_running() { live && [[ -d /run/systemd/system ]]; }

install_files() {
    local entry source target mode relative
    for entry in "${files[@]}"; do
        read -r source target mode <<<"$entry"
        # An operator's settings survive reinstalls and upgrades.
        if [[ $target == "$config" && -e $destdir$target ]]; then
            echo "kept existing $target"
            continue
        fi
        install -d -m 0755 "$(dirname -- "$destdir$target")"
        render "$source" >"$destdir$target.tmp"
        chmod "$mode" "$destdir$target.tmp"
        mv -f "$destdir$target.tmp" "$destdir$target"
        echo "installed $target"
    done
    # Relative links (Debian's policy for links within /usr), worked out from the paths alone:
    # they lead to the same file in a DESTDIR tree as once installed.
    for entry in "${links[@]}"; do
        read -r target source <<<"$entry"
        install -d -m 0755 "$(dirname -- "$destdir$target")"
        relative=$(realpath --no-symlinks --canonicalize-missing --relative-to="$(dirname -- "$target")" -- "$source")
        ln -sfn -- "$relative" "$destdir$target"
        echo "installed $target -> $source"
    done
}

# PURGE is --purge to drop an edited configuration too.
uninstall_files() {
    local purge=${1:-} entry source target mode
    for entry in "${files[@]}"; do
        read -r source target mode <<<"$entry"
        [[ -e $destdir$target ]] || continue
        if [[ $target == "$config" && $purge != --purge ]] && ! render "$source" | cmp -s - "$destdir$target"; then
            echo "kept $target: it was edited (remove it yourself, or use --purge)"
            continue
        fi
        rm -f -- "$destdir$target"
        echo "removed $target"
    done
    for entry in "${links[@]}"; do
        read -r target source <<<"$entry"
        if [[ -L $destdir$target ]]; then
            rm -f -- "$destdir$target"
            echo "removed $target"
        fi
    done
    rmdir -- "$destdir$pkglibdir/rankings_night" "$destdir$pkglibdir" 2>/dev/null || true
}
