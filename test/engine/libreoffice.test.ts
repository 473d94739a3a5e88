// The supervised LibreOffice converter (src/convert/libreoffice.ts): every corpus DOCX gives a
// valid PDF, the process is reused warm, recycled after failures, timeouts and N conversions,
// killed as a process group, and documents cannot read neighbour files or reach the network.
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import {
  ConversionError,
  docxToPdf,
  libreOfficeStatus,
  networkNamespaceAvailable,
  stopLibreOffice,
} from "../../src/convert/libreoffice";
import { libreOfficeConfig } from "../../src/config";
import { corpusDir, hasCorpus } from "../support/service";
import { corpusFileNames } from "../support/corpus";

const files = join(corpusDir, "files");
const dir = mkdtempSync(join(tmpdir(), "lo-test-"));
afterAll(() => {
  stopLibreOffice();
  rmSync(dir, { recursive: true, force: true });
});

function pdfPages(path: string): number {
  const r = spawnSync("pdfinfo", [path], { encoding: "utf8" });
  expect(r.status).toBe(0);
  return Number(/Pages:\s+(\d+)/.exec(r.stdout)![1]);
}
function pdfImageCount(path: string): number {
  const r = spawnSync("pdfimages", ["-list", path], { encoding: "utf8" });
  return r.stdout.trim().split("\n").length - 2;
}
function alive(pid: number): boolean {
  const stat = spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).stdout.trim();
  return stat !== "" && !stat.startsWith("Z");
}
/** soffice.bin processes in the converter's process group (led by the Python server). */
function sofficePids(group: number): number[] {
  const r = spawnSync("ps", ["-e", "-o", "pid=,pgid=,comm="], { encoding: "utf8" });
  return r.stdout
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length === 3 && Number(f[1]) === group && f[2]!.startsWith("soffice"))
    .map((f) => Number(f[0]))
    .filter(alive);
}
/** A 20x20 red PNG. */
function png(): Buffer {
  const py = `import zlib,struct,sys
raw=b''.join(b'\\x00'+b'\\xff\\x00\\x00'*20 for _ in range(20))
def ch(t,d): return struct.pack('>I',len(d))+t+d+struct.pack('>I',zlib.crc32(t+d))
sys.stdout.buffer.write(b'\\x89PNG\\r\\n\\x1a\\n'+ch(b'IHDR',struct.pack('>IIBBBBB',20,20,8,2,0,0,0))+ch(b'IDAT',zlib.compress(raw))+ch(b'IEND',b''))`;
  return spawnSync("/usr/bin/python3", ["-c", py]).stdout as Buffer;
}
/** The corpus's external-picture document with its link target replaced. */
function externalPictureDocx(target: string, out: string) {
  const py = `import zipfile,sys
src,dst,target=sys.argv[1:4]
with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst,'w',zipfile.ZIP_DEFLATED) as zo:
    for it in zi.infolist():
        data=zi.read(it.filename)
        if it.filename=='word/_rels/document.xml.rels': data=data.replace(b'Target="tiny-picture.png"', ('Target="%s"'%target).encode())
        zo.writestr(it, data)`;
  const r = spawnSync("/usr/bin/python3", ["-c", py, join(files, "docx-external-picture.docx"), out, target]);
  expect(r.status).toBe(0);
}

const docxFiles = corpusFileNames(".docx");

describe("docx -> pdf through the warm LibreOffice", () => {
  test.skipIf(!hasCorpus)(
    "every corpus DOCX converts to a valid PDF of at least one page",
    async () => {
      expect(docxFiles.length).toBeGreaterThanOrEqual(12);
      for (const f of docxFiles) {
        const out = join(dir, f.replace(/\.docx$/, ".pdf"));
        await docxToPdf(join(files, f), out);
        expect(pdfPages(out)).toBeGreaterThanOrEqual(1);
      }
    },
    120_000,
  );

  test.skipIf(!hasCorpus)(
    "conversions reuse one process and are fast once warm",
    async () => {
      await docxToPdf(join(files, "docx-tables.docx"), join(dir, "w1.pdf"));
      const pid = libreOfficeStatus().pid;
      const t0 = performance.now();
      await docxToPdf(join(files, "docx-hyperlinks.docx"), join(dir, "w2.pdf"));
      const ms = performance.now() - t0;
      expect(libreOfficeStatus().pid).toBe(pid!);
      expect(ms).toBeLessThan(1000);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a document that does not load fails with conversion_failed and recycles the process",
    async () => {
      await docxToPdf(join(files, "docx-tables.docx"), join(dir, "r1.pdf"));
      const before = libreOfficeStatus().pid!;
      const bad = join(dir, "broken.docx");
      writeFileSync(bad, Buffer.from("PK\u0003\u0004 this is not a real zip archive at all"));
      const err = await docxToPdf(bad, join(dir, "broken.pdf")).catch((e) => e);
      expect(err).toBeInstanceOf(ConversionError);
      expect(err.code).toBe("conversion_failed");
      expect(existsSync(join(dir, "broken.pdf"))).toBe(false);
      expect(libreOfficeStatus().running).toBe(false);
      await Bun.sleep(200);
      expect(alive(before)).toBe(false);
      await docxToPdf(join(files, "docx-tables.docx"), join(dir, "r2.pdf"));
      expect(libreOfficeStatus().pid).not.toBe(before);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a conversion over the timeout is stopped and the whole process group is killed",
    async () => {
      await docxToPdf(join(files, "docx-tables.docx"), join(dir, "t0.pdf"));
      const pythonPid = libreOfficeStatus().pid!;
      const soffice = sofficePids(pythonPid);
      expect(soffice.length).toBeGreaterThanOrEqual(1);
      const err = await docxToPdf(join(files, "docx-with-images.docx"), join(dir, "t1.pdf"), { timeoutS: 0.001 }).catch(
        (e) => e,
      );
      expect(err).toBeInstanceOf(ConversionError);
      expect(err.message).toContain("longer than");
      await Bun.sleep(300);
      expect(alive(pythonPid)).toBe(false);
      for (const p of soffice) expect(alive(p)).toBe(false);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "the process is recycled after the configured number of conversions",
    async () => {
      const saved = libreOfficeConfig.maxConversions;
      libreOfficeConfig.maxConversions = 2;
      try {
        stopLibreOffice();
        await docxToPdf(join(files, "docx-tables.docx"), join(dir, "m1.pdf"));
        const first = libreOfficeStatus().pid;
        await docxToPdf(join(files, "docx-tables.docx"), join(dir, "m2.pdf"));
        expect(libreOfficeStatus().pid).toBe(first!);
        await docxToPdf(join(files, "docx-tables.docx"), join(dir, "m3.pdf"));
        expect(libreOfficeStatus().pid).not.toBe(first);
        expect(libreOfficeStatus().conversions).toBe(1);
      } finally {
        libreOfficeConfig.maxConversions = saved;
      }
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "stopping kills Python and soffice.bin",
    async () => {
      await docxToPdf(join(files, "docx-tables.docx"), join(dir, "s1.pdf"));
      const pid = libreOfficeStatus().pid!;
      const soffice = sofficePids(pid);
      expect(soffice.length).toBeGreaterThanOrEqual(1);
      stopLibreOffice();
      await Bun.sleep(300);
      expect(alive(pid)).toBe(false);
      for (const p of soffice) expect(alive(p)).toBe(false);
    },
    60_000,
  );
});

describe("documents cannot reach outside their own bytes", () => {
  test.skipIf(!hasCorpus)(
    "a relative external picture next to the input is not read",
    async () => {
      const d = mkdtempSync(join(dir, "neighbour-"));
      copyFileSync(join(files, "docx-external-picture.docx"), join(d, "in.docx"));
      writeFileSync(join(d, "tiny-picture.png"), png());
      await docxToPdf(join(d, "in.docx"), join(d, "out.pdf"));
      expect(pdfPages(join(d, "out.pdf"))).toBe(1);
      expect(pdfImageCount(join(d, "out.pdf"))).toBe(0);
    },
    60_000,
  );

  for (const netns of ["auto", "0"] as const) {
    test.skipIf(!hasCorpus)(
      `an external picture URL is never fetched (LIBREOFFICE_NETNS=${netns})`,
      async () => {
        // auto = the namespace whenever this process may create one (root with CAP_SYS_ADMIN).
        if (netns === "auto")
          expect(networkNamespaceAvailable()).toBe(
            process.getuid?.() === 0 && spawnSync("unshare", ["--net", "--", "true"]).status === 0,
          );
        let hits = 0;
        const server = Bun.serve({
          port: 0,
          hostname: "127.0.0.1",
          fetch: () => (hits++, new Response(png(), { headers: { "content-type": "image/png" } })),
        });
        const saved = libreOfficeConfig.netns;
        libreOfficeConfig.netns = netns;
        stopLibreOffice();
        try {
          const d = mkdtempSync(join(dir, "url-"));
          for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`]) {
            externalPictureDocx(`http://${host}/tiny-picture.png`, join(d, "in.docx"));
            await docxToPdf(join(d, "in.docx"), join(d, "out.pdf"));
            expect(pdfPages(join(d, "out.pdf"))).toBe(1);
            expect(pdfImageCount(join(d, "out.pdf"))).toBe(0);
          }
          expect(libreOfficeStatus().isolated).toBe(netns === "auto" && networkNamespaceAvailable());
          expect(hits).toBe(0);
        } finally {
          libreOfficeConfig.netns = saved;
          stopLibreOffice();
          server.stop(true);
        }
      },
      60_000,
    );
  }
});
