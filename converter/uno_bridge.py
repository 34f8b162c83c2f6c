#!/usr/bin/python3
"""One warm LibreOffice instance behind a JSON-lines protocol on stdin/stdout.

Started by converter/pool.ts under Debian's /usr/bin/python3 (the only interpreter that has
`uno`), inside the instance's bwrap sandbox (converter/sandbox.ts: the system read-only, the profile,
temporary and job directories, no network) or at least inside `unshare -n`, so that this process and
the soffice it starts share one sandbox and an empty network namespace. That is why the UNO connection
is a named pipe (a Unix socket file in /tmp) instead of a TCP port.

This process is the leader of its own process group and soffice stays in it, so the pool can end
the whole instance with one killpg. When stdin closes (the Node process died) we kill the group
ourselves, so no soffice outlives its owner. stdin is not read during a conversion, and pyuno holds
the GIL for the whole remote call, so no thread of ours runs then either: a forked watcher process
notices the owner's death (we get re-parented) and kills the group at once, instead of letting an
orphan finish a long conversion nobody will read.

Protocol, one JSON object per line:
  <- {"ready": true, "pid": N, "startMs": X}            once soffice accepts
  -> {"id": 1, "in": "/abs/in.docx", "out": "/abs/out.pdf", "filter": "writer_pdf_Export",
      "filterData": {...}, "filterOptions": "...", "csvSheet": "name"|1}
  <- {"id": 1, "ok": true, "ms": 12.3}  |  {"id": 1, "ok": false, "error": "...", "fatal": bool}
  -> {"id": 1, ..., "title": "Invoice 42", "language": "de-CH"}   accessible pdf: the title when the document
                                                              has none, the language to set before exporting
  -> {"id": 2, "in": "/abs/in.docx", "count": true}     the page count of the PDF export, without exporting
  <- {"id": 2, "ok": true, "ms": 4.1, "pages": 3}
A fatal error means the office connection is gone: the bridge exits right after replying.
"""
import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

import uno
from com.sun.star.awt import Rectangle, WindowDescriptor
from com.sun.star.awt.WindowClass import TOP
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException

def props(d):
    out = []
    for k, v in d.items():
        p = PropertyValue()
        p.Name = k
        p.Value = v
        out.append(p)
    return tuple(out)


def filter_data(d):
    # FilterData must reach the PDF export as a sequence of PropertyValue wrapped in an Any,
    # otherwise pyuno passes a tuple of structs the filter silently ignores.
    return uno.Any('[]com.sun.star.beans.PropertyValue', props(d))


def emit(obj):
    sys.stdout.write(json.dumps(obj) + '\n')
    sys.stdout.flush()


def kill_group():
    try:
        os.killpg(os.getpgrp(), signal.SIGKILL)
    except OSError:
        pass


REGISTRY = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="LoadPrinter" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>1</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>1</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""


def seed_profile(profile):
    # Macros off, no printer lookups on load (slow, and pointless headless), never recalculate
    # spreadsheets on load (cached values are what the author saw; recalculation could call
    # WEBSERVICE and friends). Written before the first start so it applies from the first document.
    user = os.path.join(profile, 'user')
    path = os.path.join(user, 'registrymodifications.xcu')
    if not os.path.exists(path):
        os.makedirs(user, exist_ok=True)
        with open(path, 'w') as f:
            f.write(REGISTRY)


def start_office(args):
    seed_profile(args.profile)
    cmd = [args.soffice,
           '-env:UserInstallation=' + uno.systemPathToFileUrl(args.profile),
           '--headless', '--invisible', '--nologo', '--norestore', '--nodefault', '--nolockcheck',
           '--nofirststartwizard',
           '--accept=pipe,name=%s;urp;StarOffice.ComponentContext' % args.pipe]
    env = dict(os.environ)
    env['TMPDIR'] = args.tmp
    # soffice's own chatter must never reach our stdout, which is the protocol channel.
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sys.stderr, env=env)


def connect(office, pipe, timeout):
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext('com.sun.star.bridge.UnoUrlResolver', local)
    url = 'uno:pipe,name=%s;urp;StarOffice.ComponentContext' % pipe
    deadline = time.time() + timeout
    while True:
        try:
            ctx = resolver.resolve(url)
            return ctx, ctx.ServiceManager.createInstanceWithContext('com.sun.star.frame.Desktop', ctx)
        except NoConnectException:
            if office.poll() is not None:
                raise RuntimeError('soffice exited with code %s before accepting' % office.returncode)
            if time.time() > deadline:
                raise
            time.sleep(0.05)


def exit_with_office(office):
    code = office.wait()
    sys.stderr.write('soffice exited with code %s\n' % code)
    sys.stderr.flush()
    kill_group()


def watch_owner():
    """Forks the watcher; returns in the bridge. Call before any thread starts."""
    bridge, owner = os.getpid(), os.getppid()
    if os.fork() != 0:
        return
    try:
        # Hold none of the bridge's pipes, so its owner sees them close when the bridge exits.
        os.closerange(0, 1024)
        while True:
            time.sleep(0.5)
            try:
                with open('/proc/%d/stat' % bridge) as f:
                    stat = f.read()
            except OSError:
                break
            if int(stat[stat.rindex(')') + 2:].split()[1]) != owner:
                kill_group()
    finally:
        os._exit(0)


def office_alive(office, desktop):
    if office.poll() is not None:
        return False
    try:
        desktop.getFrames().getCount()
        return True
    except Exception:  # noqa: BLE001
        return False


def locale_of(tag):
    """A com.sun.star.lang.Locale from a BCP 47 tag: language and region; anything else in the tag goes to
    Variant as the whole tag with Language 'qlt', which is how LibreOffice carries tags it cannot split."""
    from com.sun.star.lang import Locale
    parts = tag.replace('_', '-').split('-')
    if len(parts) == 1 or (len(parts) == 2 and len(parts[1]) == 2):
        return Locale(parts[0].lower(), parts[1].upper() if len(parts) == 2 else '', '')
    return Locale('qlt', '', tag)


def prepare_accessible(doc, req):
    """Before an accessible export: the document's title (PDF/UA needs dc:title and shows it in the window's
    title bar) when it has none of its own, and the language of its text where the template set none. The
    document is only changed in memory; nothing is saved but the export."""
    title = req.get('title')
    if title:
        props_ = doc.getDocumentProperties()
        if not (props_.Title or '').strip():
            props_.Title = title
    language = req.get('language')
    if language:
        doc.setPropertyValue('CharLocale', locale_of(language))


def rendered_pages(doc):
    """The pages a PDF export of `doc` would have: XRenderable.getRendererCount with the options the PDF
    export passes (filter/source/pdf/pdfexport.cxx: all pages, no notes pages, automatically inserted
    blank pages skipped, which is the export's default). The layout runs; nothing is written."""
    opts = {'ExportNotesPages': False, 'IsFirstPage': True, 'IsLastPage': False, 'IsSkipEmptyPages': True, 'PageRange': ''}
    return int(doc.getRendererCount(doc, props(opts)))


class Frame:
    """The hidden frame every document is loaded into, made once and reused.

    Loading into a new frame ('_blank') makes a window, a frame and the frame's UI (layout manager,
    toolbars, menus) for every document, about a third of a small document's load. This frame has no
    layout manager, so no UI element is ever made; after a document it is emptied (setComponent) and the
    document closed. Any failure while it holds a document drops it, and the next document gets a new one.
    """

    def __init__(self, ctx, desktop):
        self.ctx = ctx
        self.desktop = desktop
        self.frame = None

    def get(self):
        if self.frame is None:
            smgr = self.ctx.ServiceManager
            toolkit = smgr.createInstanceWithContext('com.sun.star.awt.Toolkit', self.ctx)
            d = WindowDescriptor()
            d.Type = TOP
            d.WindowServiceName = ''
            d.ParentIndex = -1
            d.Bounds = Rectangle(0, 0, 1024, 768)
            d.WindowAttributes = 0   # not shown: the window stays invisible
            window = toolkit.createWindow(d)
            frame = smgr.createInstanceWithContext('com.sun.star.frame.Frame', self.ctx)
            frame.initialize(window)
            frame.setPropertyValue('LayoutManager', None)
            frame.setCreator(self.desktop)
            self.desktop.getFrames().append(frame)
            self.frame = frame
        return self.frame

    def drop(self):
        frame, self.frame = self.frame, None
        if frame is not None:
            try:
                frame.close(True)
            except Exception:  # noqa: BLE001  (a frame in a bad state may refuse; dispose it)
                try:
                    frame.dispose()
                except Exception:  # noqa: BLE001  (the office is gone: the caller finds out)
                    pass


def convert(frames, req, closing):
    """Loads, then counts or stores. The document is closed by the caller after the reply (`closing`
    receives it): closing takes a few ms that nobody needs to wait for."""
    t0 = time.perf_counter()
    pages = None
    load = {
        'Hidden': True,
        'ReadOnly': True,
        # Defence in depth behind the sanitizer in sanitize.ts: never run macros, never refresh links.
        'MacroExecutionMode': 0,   # MacroExecMode.NEVER_EXECUTE
        'UpdateDocMode': 0,        # UpdateDocMode.NO_UPDATE
    }
    frame = frames.get()
    # Until the document is in `closing`, a failure leaves the frame in an unknown state: drop it.
    closing.append(None)
    doc = frame.loadComponentFromURL(uno.systemPathToFileUrl(req['in']), '_self', 0, props(load))
    if doc is None:
        raise ValueError('LibreOffice could not load the document')
    closing[-1] = doc
    if req.get('count'):
        return (time.perf_counter() - t0) * 1000.0, rendered_pages(doc)
    store = {'FilterName': req['filter'], 'Overwrite': True}
    if req.get('title') or req.get('language'):
        prepare_accessible(doc, req)
    if req.get('filterData'):
        store['FilterData'] = filter_data(req['filterData'])
    if req.get('filterOptions') is not None:
        store['FilterOptions'] = req['filterOptions']
    sheet = req.get('csvSheet')
    if sheet is not None:
        sheets = doc.getSheets()
        names = sheets.getElementNames()
        if isinstance(sheet, str):
            if sheet not in names:
                raise ValueError('no sheet named %r (sheets: %s)' % (sheet, ', '.join(names)))
            number = list(names).index(sheet) + 1
        else:
            if sheet < 1 or sheet > len(names):
                raise ValueError('sheet %d out of range (the workbook has %d)' % (sheet, len(names)))
            number = sheet
        # Token 12 of the CSV filter options (LibreOffice >= 7.2) picks the 1-based sheet; the
        # active sheet is not what a hidden document's export uses.
        tokens = (store.get('FilterOptions') or '').split(',')
        tokens += [''] * (12 - len(tokens))
        tokens[11] = str(number)
        store['FilterOptions'] = ','.join(tokens)
    doc.storeToURL(uno.systemPathToFileUrl(req['out']), props(store))
    if sheet is not None and not os.path.exists(req['out']):
        # With a sheet token the CSV filter names the file <base>-<SheetName>.csv.
        base, ext = os.path.splitext(req['out'])
        made = glob.glob(glob.escape(base) + '-*' + ext)
        if len(made) != 1:
            raise RuntimeError('the CSV export wrote %d files' % len(made))
        os.rename(made[0], req['out'])
    return (time.perf_counter() - t0) * 1000.0, pages


def close_all(frames, closing):
    """Empties the frame and closes its document; a load that failed half-way (None), or a document
    that will not go, drops the frame instead."""
    while closing:
        doc = closing.pop()
        try:
            if doc is None:
                raise RuntimeError('no document')
            frames.frame.setComponent(None, None)
            doc.close(True)
        except Exception:  # noqa: BLE001  (a document that failed half-way may refuse to close)
            frames.drop()
            if doc is not None:
                try:
                    doc.dispose()
                except Exception:  # noqa: BLE001  (the office is gone: the caller finds out)
                    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--soffice', default='soffice')
    ap.add_argument('--profile', required=True)
    ap.add_argument('--tmp', required=True)
    ap.add_argument('--pipe', required=True)
    ap.add_argument('--start-timeout', type=float, default=60.0)
    a = ap.parse_args()
    # In the sandbox's PID namespace the launcher's process group (bwrap's) is outside and reads as 0: stay
    # in it, so that the pool's killpg reaches this process and soffice as before (and killpg(0) ours).
    if os.getpgrp() != 0 and os.getpid() != os.getpgrp():
        os.setpgrp()
    watch_owner()
    t0 = time.perf_counter()
    office = start_office(a)
    try:
        ctx, desktop = connect(office, a.pipe, a.start_timeout)
        frames = Frame(ctx, desktop)
    except Exception as e:  # noqa: BLE001
        emit({'ready': False, 'error': 'start: %s' % e})
        kill_group()
        return 1
    emit({'ready': True, 'pid': office.pid, 'startMs': (time.perf_counter() - t0) * 1000.0})
    # An office that dies while we wait on stdin would otherwise be noticed only by the next
    # request, which would then fail; exiting at once lets the pool restart us in the meantime.
    threading.Thread(target=exit_with_office, args=(office,), daemon=True).start()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        if req.get('quit'):
            break
        rid = req.get('id')
        closing = []
        try:
            ms, pages = convert(frames, req, closing)
            emit({'id': rid, 'ok': True, 'ms': ms, **({'pages': pages} if pages is not None else {})})
            close_all(frames, closing)
        except Exception as e:  # noqa: BLE001
            close_all(frames, closing)
            # Whether the office survived decides between "this document failed" and "restart me";
            # the exception type alone does not tell (a killed soffice.bin surfaces as anything from
            # DisposedException to a plain RuntimeException while oosplash is still alive).
            fatal = not office_alive(office, desktop)
            emit({'id': rid, 'ok': False, 'error': '%s: %s' % (type(e).__name__, e), 'fatal': fatal})
            if fatal:
                break
    try:
        desktop.terminate()
    except Exception:  # noqa: BLE001  (the bridge drops when the office exits)
        pass
    try:
        office.wait(timeout=5)
    except Exception:  # noqa: BLE001
        pass
    kill_group()
    return 0


if __name__ == '__main__':
    sys.exit(main())
