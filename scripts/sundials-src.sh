#!/bin/sh
# Fetches Debian's SUNDIALS source and unpacks it, once, into DEST (default
# build/sundials-src): from the system's own suite (bookworm: 6.4.1, with the
# CUDA vector that the binary package leaves out), or from SUITE when given
# (trixie: 7.1.1). Uses apt with a private deb-src list, so the system's apt
# configuration is left as it is.
set -eu
dest=${1:-build/sundials-src}
suite=${2:-}
[ -f "$dest/.unpacked" ] && exit 0
work=$(dirname "$dest")/apt-src${suite:+-$suite}
mkdir -p "$work/lists/partial" "$work/download"
sources=/etc/apt/sources.list.d/debian.sources
if [ ! -f "$sources" ]; then
    echo "sundials-src.sh: $sources not found; cannot locate Debian's source archive" >&2
    exit 1
fi
# Only Debian's own archives, as deb-src.
awk -v suite="$suite" 'BEGIN{RS=""; ORS="\n\n"} /debian\.org/ {
        sub(/Types: deb/, "Types: deb-src")
        if (suite != "") { if ($0 ~ /security/) next; sub(/Suites: [^\n]*/, "Suites: " suite) }
        print }' "$sources" > "$work/debian-src.sources"
opts="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$PWD/$work/parts \
-o Dir::State::Lists=$PWD/$work/lists -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
mkdir -p "$work/parts"
cp "$work/debian-src.sources" "$work/parts/debian-src.sources"
# shellcheck disable=SC2086
apt-get $opts -qq update >/dev/null
(cd "$work/download" && apt-get $opts -qq source --download-only sundials >/dev/null)
tarball=$(ls "$work"/download/sundials_*.orig.tar.xz | head -n 1)
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
tar -xJf "$tarball" -C "$dest.tmp" --strip-components=1
rm -rf "$dest" && mv "$dest.tmp" "$dest"
touch "$dest/.unpacked"
echo "sundials-src.sh: $(basename "$tarball") unpacked in $dest" >&2
