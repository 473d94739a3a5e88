#!/usr/bin/python3
# A long-lived LibreOffice converter, one per worker process, driven by src/convert/libreoffice.ts.
#
# Run with Debian's /usr/bin/python3 (it has the `uno` module from python3-uno). It starts
# soffice.bin headless with a private profile directory, accepting UNO connections on a named
# pipe (a Unix socket, never TCP), then answers one JSON request per line on stdin with one JSON
# line on stdout:
#   -> {"id": 1, "input": "/abs/in.docx", "output": "/abs/out.pdf"}
#   <- {"id": 1, "ok": true}   or   {"id": 1, "ok": false, "error": "..."}
# The first line written is {"ready": true, "pid": <soffice pid>} once soffice answers.
#
# Safety: documents are loaded Hidden, read-only, with MacroExecutionMode NEVER and
# UpdateDocMode NO_UPDATE (no link updates); the profile is seeded with settings that disable
# macros, block untrusted external links and send any HTTP(S)/FTP through an unusable proxy.
# The TS side additionally runs this process in an empty network namespace when it can.
# The process makes itself a process-group leader; soffice.bin (started directly, not via the
# oosplash wrapper) gets PR_SET_PDEATHSIG so it dies with this process, and this process dies
# with its parent (the worker).
import ctypes
import json
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1


def set_pdeathsig():
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except Exception:
        pass


set_pdeathsig()
try:
    os.setpgid(0, 0)
except OSError:
    pass

import uno  # noqa: E402
from com.sun.star.beans import PropertyValue  # noqa: E402
from com.sun.star.connection import NoConnectException  # noqa: E402

SOFFICE_BIN = os.environ.get("SOFFICE_BIN", "/usr/lib/libreoffice/program/soffice.bin")

REGISTRY = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/Content/Display"><prop oor:name="Note" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="UseLocking" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="CreateBackup" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Recovery/AutoSave"><prop oor:name="Enabled" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Recovery/RecoveryInfo"><prop oor:name="Enabled" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Update/Update"><prop oor:name="CheckPeriod" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetProxyType" oor:op="fuse"><value>2</value></prop></item>
<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetHTTPProxyName" oor:op="fuse"><value>127.0.0.1</value></prop></item>
<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetHTTPProxyPort" oor:op="fuse"><value>9</value></prop></item>
<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetHTTPSProxyName" oor:op="fuse"><value>127.0.0.1</value></prop></item>
<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetHTTPSProxyPort" oor:op="fuse"><value>9</value></prop></item>
<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetFTPProxyName" oor:op="fuse"><value>127.0.0.1</value></prop></item>
<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetFTPProxyPort" oor:op="fuse"><value>9</value></prop></item>
<item oor:path="/org.openoffice.Inet/Settings"><prop oor:name="ooInetNoProxy" oor:op="fuse"><value></value></prop></item>
</oor:items>
"""


def prop(name, value):
    p = PropertyValue()
    p.Name = name
    p.Value = value
    return p


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def one_shot(input_path, output_path, profile, env):
    import shutil
    import tempfile

    work = tempfile.mkdtemp(prefix="oneshot-", dir=profile)
    try:
        user = os.path.join(work, "profile", "user")
        os.makedirs(user)
        with open(os.path.join(user, "registrymodifications.xcu"), "w") as f:
            f.write(REGISTRY)
        out_dir = os.path.join(work, "out")
        os.makedirs(out_dir)
        args = [
            SOFFICE_BIN, "--headless", "--invisible", "--nologo", "--norestore", "--nolockcheck",
            "-env:UserInstallation=" + uno.systemPathToFileUrl(os.path.join(work, "profile")),
            "--convert-to", "pdf:writer_pdf_Export", "--outdir", out_dir, input_path,
        ]
        for _ in range(3):  # 81: first start of a fresh profile asks for a restart
            r = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, preexec_fn=set_pdeathsig, timeout=300)
            if r.returncode != 81:
                break
        produced = os.path.join(out_dir, os.path.splitext(os.path.basename(input_path))[0] + ".pdf")
        if r.returncode == 0 and os.path.exists(produced):
            shutil.move(produced, output_path)
            return True, ""
        return False, "soffice --convert-to exited with status %s" % r.returncode
    except Exception as e:
        return False, str(e)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    profile = sys.argv[1]
    pipe = "docproc_lo_%d_%d" % (os.getpid(), int(time.time() * 1000) % 1000000)
    user = os.path.join(profile, "user")
    os.makedirs(user, exist_ok=True)
    with open(os.path.join(user, "registrymodifications.xcu"), "w") as f:
        f.write(REGISTRY)

    env = dict(os.environ)
    env.pop("http_proxy", None)
    env.pop("https_proxy", None)
    env["SAL_USE_VCLPLUGIN"] = "svp"
    args = [
        SOFFICE_BIN,
        "--headless",
        "--invisible",
        "--nologo",
        "--norestore",
        "--nodefault",
        "--nolockcheck",
        "--nofirststartwizard",
        "-env:UserInstallation=" + uno.systemPathToFileUrl(profile),
        "--accept=pipe,name=%s;urp;StarOffice.ComponentContext" % pipe,
    ]

    def start():
        return subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            preexec_fn=set_pdeathsig,
        )

    soffice = start()
    restarts = 0

    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    ctx = None
    deadline = time.time() + 60
    while ctx is None:
        if soffice.poll() is not None:
            # 81 = "restart requested": a fresh profile was just initialised (what the oosplash
            # wrapper would handle); start again once or twice.
            if soffice.returncode == 81 and restarts < 3:
                restarts += 1
                soffice = start()
                continue
            emit({"ready": False, "error": "soffice exited with status %s during start-up" % soffice.returncode})
            return 1
        try:
            ctx = resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
        except NoConnectException:
            if time.time() > deadline:
                emit({"ready": False, "error": "soffice did not accept connections within 60 s"})
                soffice.kill()
                return 1
            time.sleep(0.1)
    desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
    emit({"ready": True, "pid": soffice.pid})

    load_props = (
        prop("Hidden", True),
        prop("ReadOnly", True),
        prop("MacroExecutionMode", 0),  # com.sun.star.document.MacroExecMode.NEVER_EXECUTE
        prop("UpdateDocMode", 0),  # com.sun.star.document.UpdateDocMode.NO_UPDATE
        prop("RepairPackage", False),
        prop("Silent", True),
    )
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        rid = req.get("id")
        doc = None
        try:
            src = uno.systemPathToFileUrl(req["input"])
            dst = uno.systemPathToFileUrl(req["output"])
            doc = desktop.loadComponentFromURL(src, "_blank", 0, load_props)
            if doc is None:
                raise RuntimeError("LibreOffice could not load the document")
            if not doc.supportsService("com.sun.star.text.GenericTextDocument"):
                raise RuntimeError("the document did not load as a text document")
            doc.storeToURL(dst, (prop("FilterName", "writer_pdf_Export"),))
            emit({"id": rid, "ok": True})
        except Exception as e:  # a UNO exception or a dead bridge: report; the TS side restarts us
            message = (getattr(e, "Message", "") or str(e) or type(e).__name__)[:500]
            if soffice.poll() is not None or "disposed" in message:
                # soffice crashed. Known case (LibreOffice 7.4): comment windows created by an
                # idle-time event of a loaded document crash the svp backend. A one-shot
                # `--convert-to` loads, exports and closes without idling, so retry that way once
                # (same namespace, same locked-down settings, a fresh profile), then exit: the TS
                # side starts a fresh converter for the next document.
                doc = None
                ok, detail = one_shot(req["input"], req["output"], profile, env)
                emit({"id": rid, "ok": ok, "fallback": True} if ok else {"id": rid, "ok": False, "error": "%s; one-shot retry: %s" % (message, detail)})
                return 0
            emit({"id": rid, "ok": False, "error": message})
        finally:
            if doc is not None:
                try:
                    doc.close(True)
                except Exception:
                    try:
                        doc.dispose()
                    except Exception:
                        pass
    try:
        desktop.terminate()
    except Exception:
        pass
    try:
        soffice.wait(timeout=5)
    except Exception:
        soffice.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
