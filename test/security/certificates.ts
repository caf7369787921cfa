/** Test certificates made with the openssl command in a temporary directory (P-256 keys: fast). */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

/**
 * A certificate `<name>.pem` with key `<name>.key`, issued by the CA `ca` made by makeCa (or
 * self-signed without one), valid for `days` days; `subject` in openssl's `/K=V/...` form; `san`
 * (with a CA) the subjectAltName, e.g. `IP:127.0.0.1`, which hostname checks such as librdkafka's
 * read instead of the subject.
 */
export function makeCert(
  dir: string,
  name: string,
  subject: string,
  options: { ca?: string; days?: number; multivalue?: boolean; san?: string } = {},
): { cert: string; key: string } {
  const days = String(options.days ?? 365);
  const multi = options.multivalue ? ["-multivalue-rdn"] : [];
  if (options.ca === undefined) {
    openssl(dir, [
      "req",
      "-x509",
      ...EC,
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.pem`,
      "-days",
      days,
      "-subj",
      subject,
      ...multi,
    ]);
  } else {
    openssl(dir, [
      "req",
      "-new",
      ...EC,
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.csr`,
      "-subj",
      subject,
      ...multi,
    ]);
    const ca = options.ca;
    const ext: string[] = [];
    if (options.san !== undefined) {
      writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${options.san}\n`);
      ext.push("-extfile", `${name}.ext`);
    }
    openssl(
      dir,
      [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        `${ca}.pem`,
        "-CAkey",
        `${ca}.key`,
        "-CAcreateserial",
      ].concat(["-out", `${name}.pem`, "-days", days], ext),
    );
  }
  return { cert: join(dir, `${name}.pem`), key: join(dir, `${name}.key`) };
}

/** An encrypted copy of the key `key` at `<name>.key` in `dir`. */
export function encryptKey(dir: string, key: string, name: string): string {
  openssl(dir, ["pkey", "-in", key, "-out", `${name}.key`, "-aes256", "-passout", "pass:secret"]);
  return join(dir, `${name}.key`);
}

/** A self-signed CA `<name>.pem` / `<name>.key` in `dir` (for makeCert's `ca`); returns the certificate path. */
export function makeCa(dir: string, name = "ca", subject = "/CN=conch-test-ca"): string {
  return makeCert(dir, name, subject).cert;
}
