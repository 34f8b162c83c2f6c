#!/usr/bin/env bash
# Installs what converter/index.ts needs on a fresh Debian 12 machine (run as root).
# Idempotent: when every package is already present it only runs dpkg-query and exits,
# so .ci/run can call it unconditionally.
set -euo pipefail

PACKAGES=(
  libreoffice-writer-nogui   # docx -> pdf
  libreoffice-calc-nogui     # xlsx -> pdf/csv
  libreoffice-impress-nogui  # pptx -> pdf
  python3-uno                # the UNO bridge (converter/uno_bridge.py) runs under /usr/bin/python3
  poppler-utils              # pdfinfo/pdftotext, used by the converter tests
  qpdf                       # a batch's merged PDF (activities/batch/pdf.ts)
  fonts-dejavu-core
  fonts-liberation2          # metric-compatible Arial/Times/Courier so layouts match Word's
  fonts-liberation           # Liberation Sans Narrow (metric-compatible Arial Narrow)
  fonts-crosextra-carlito    # metric-compatible Calibri (Word/PowerPoint body font 2007-2023)
  fonts-crosextra-caladea    # metric-compatible Cambria (Word's heading font 2007-2013)
  fonts-noto-core            # Arabic, Hebrew, Devanagari, Thai and most other scripts (Noto Sans/Serif/Naskh)
  fonts-noto-cjk             # Chinese, Japanese, Korean (Noto Sans/Serif CJK)
  fonts-noto-color-emoji     # emoji in colour (LibreOffice 7.5+ exports colour fonts to pdf)
  fonts-symbola              # emoji as outlines: what LibreOffice 7.4 (Debian 12) draws in pdfs (converter/fonts.ts)
  fontconfig                 # fc-match/fc-list; the converter's font configuration (converter/fonts.ts)
  # Hyphenation patterns LibreOffice uses for documents in these languages (Word's automatic hyphenation).
  hyphen-en-us hyphen-en-gb hyphen-de hyphen-fr hyphen-es hyphen-it hyphen-nl hyphen-pt-br hyphen-pt-pt
  hyphen-pl hyphen-sv hyphen-da hyphen-no hyphen-cs hyphen-sk hyphen-hu hyphen-ro hyphen-hr hyphen-sl
  hyphen-ru hyphen-uk hyphen-el hyphen-ca hyphen-lt hyphen-lv hyphen-bg hyphen-hi hyphen-th
  util-linux                 # unshare -n (network namespace when bwrap cannot run), prlimit (memory cap)
  bubblewrap                 # bwrap: each soffice sees only its profile and its job (filesystem + network sandbox)
  procps                     # ps, used by the converter tests to check for leftover soffice processes
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-converter: all packages present"
else
  echo "install-converter: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  # --no-install-recommends keeps out the Java runtime and GUI bits soffice does not need headless.
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A broken python3-uno (e.g. a partial install) would otherwise surface only as a pool that never
# becomes ready; fail loudly here instead.
/usr/bin/python3 -c 'import uno' || { echo "install-converter: /usr/bin/python3 cannot import uno" >&2; exit 1; }
command -v soffice >/dev/null || { echo "install-converter: soffice not on PATH" >&2; exit 1; }
echo "install-converter: ok ($(soffice --version 2>/dev/null | head -n1))"
