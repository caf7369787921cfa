import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { once } from "node:events";
import { copyFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { connect, createServer, type TLSSocket } from "node:tls";
import { ErrorCode } from "../../src/format/errors.js";
import { certificatePrincipal } from "../../src/security/certificate-principal.js";
import { loadTls, MAX_PEM_BYTES, TlsMaterial } from "../../src/security/tls-material.js";
import { encryptKey, makeCa, makeCert } from "./certificates.js";
import { isCode, withTempDir } from "./helpers.js";

const DAY = 86_400_000;

async function rejectsWith(promise: Promise<unknown>, reason: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(isCode(ErrorCode.INVALID_CONFIG)(err), String(err));
    assert.match((err as Error).message, reason);
    return true;
  });
}

describe("TLS material", () => {
  test("loads a certificate and its key into secure-context options", () =>
    withTempDir(async (dir) => {
      const { cert, key } = makeCert(dir, "server", "/O=acme/CN=localhost");
      const material = await TlsMaterial.load({ certFile: cert, keyFile: key });
      assert.equal(material.current.subject, "CN=localhost,O=acme");
      assert.deepEqual(material.current.warnings, []);
      assert.deepEqual(material.current.options.cert, await readFile(cert));
      assert.equal(material.current.options.minVersion, "TLSv1.2");
      const server = material.serverOptions();
      assert.equal(server.requestCert, false);
      assert.equal(server.rejectUnauthorized, false);
    }));

  test("each wrong file is a clear INVALID_CONFIG naming the flag and the file", () =>
    withTempDir(async (dir) => {
      const a = makeCert(dir, "a", "/CN=a");
      const b = makeCert(dir, "b", "/CN=b");
      const missing = join(dir, "missing.pem");
      await rejectsWith(
        loadTls({ certFile: missing, keyFile: a.key }),
        /^--tls-cert .*missing\.pem does not exist$/,
      );
      await rejectsWith(
        loadTls({ certFile: a.cert, keyFile: missing }),
        /^--tls-key .*missing\.pem does not exist$/,
      );
      await rejectsWith(
        loadTls({ certFile: a.cert, keyFile: b.key }),
        /--tls-key .*b\.key does not match the certificate in --tls-cert .*a\.pem/,
      );
      await rejectsWith(
        loadTls({ certFile: a.key, keyFile: a.key }),
        /--tls-cert .*a\.key holds no PEM certificate/,
      );
      await rejectsWith(
        loadTls({ certFile: a.cert, keyFile: a.cert }),
        /--tls-key .*a\.pem holds no PEM private key/,
      );
      const encrypted = encryptKey(dir, a.key, "encrypted");
      await rejectsWith(loadTls({ certFile: a.cert, keyFile: encrypted }), /is encrypted/);
      const garbled = join(dir, "garbled.pem");
      await writeFile(garbled, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
      await rejectsWith(loadTls({ certFile: garbled, keyFile: a.key }), /certificate 1 does not parse/);
      const huge = join(dir, "huge.pem");
      await writeFile(huge, Buffer.alloc(MAX_PEM_BYTES + 1, 0x41));
      await rejectsWith(loadTls({ certFile: huge, keyFile: a.key }), /the limit is 1048576/);
      await rejectsWith(
        loadTls({ certFile: a.cert, keyFile: a.key, caFile: missing }),
        /^--tls-ca .* does not exist$/,
      );
      await rejectsWith(
        loadTls({ certFile: a.cert, keyFile: a.key, clientAuth: "required" }),
        /needs --tls-ca/,
      );
      await rejectsWith(loadTls({ certFile: dir, keyFile: a.key }), /is not a regular file/);
    }));

  test("an expired or soon-expiring certificate loads with a warning", () =>
    withTempDir(async (dir) => {
      const { cert, key } = makeCert(dir, "server", "/CN=localhost", { days: 10 });
      const notAfter = Date.parse(new X509Certificate(await readFile(cert)).validTo);
      const soon = await loadTls({ certFile: cert, keyFile: key });
      assert.equal(soon.warnings.length, 1);
      assert.match(soon.warnings[0]!, /expires on .* in 10 days/);
      const expired = await loadTls({ certFile: cert, keyFile: key }, notAfter + DAY);
      assert.match(expired.warnings[0]!, /expired on .*: clients will refuse it/);
      const early = await loadTls({ certFile: cert, keyFile: key }, notAfter - 20 * DAY);
      assert.match(early.warnings[0]!, /not valid before/);
      assert.deepEqual(
        (await loadTls({ certFile: cert, keyFile: key }, notAfter - 9 * DAY)).warnings.length,
        1,
      );
    }));

  test("a chain in the wrong order is a warning", () =>
    withTempDir(async (dir) => {
      makeCa(dir);
      const leaf = makeCert(dir, "leaf", "/CN=leaf", { ca: "ca" });
      const good = join(dir, "good.pem");
      const bad = join(dir, "bad.pem");
      const [leafPem, caPem] = [await readFile(leaf.cert), await readFile(join(dir, "ca.pem"))];
      await writeFile(good, Buffer.concat([leafPem, caPem]));
      await writeFile(bad, Buffer.concat([leafPem, leafPem]));
      assert.deepEqual((await loadTls({ certFile: good, keyFile: leaf.key })).warnings, []);
      assert.match(
        (await loadTls({ certFile: bad, keyFile: leaf.key })).warnings.join(),
        /did not issue certificate 1/,
      );
    }));

  test("reload takes new files that pass, and keeps the old material when they do not", () =>
    withTempDir(async (dir) => {
      const first = makeCert(dir, "first", "/CN=first");
      const second = makeCert(dir, "second", "/CN=second");
      const cert = join(dir, "server.pem");
      const key = join(dir, "server.key");
      await copyFile(first.cert, cert);
      await copyFile(first.key, key);
      const material = await TlsMaterial.load({ certFile: cert, keyFile: key });
      await copyFile(second.cert, cert);
      const mismatched = await material.reload();
      assert.equal(mismatched.ok, false);
      assert.ok(!mismatched.ok && /does not match/.test(mismatched.error.message));
      assert.equal(material.current.subject, "CN=first");
      await copyFile(second.key, key);
      const reloaded = await material.reload();
      assert.ok(reloaded.ok);
      assert.equal(material.current.subject, "CN=second");
    }));

  test("the principal of a client certificate is its subject in RFC 4514 order with escapes", () =>
    withTempDir(async (dir) => {
      const plain = makeCert(dir, "alice", "/C=US/O=acme/CN=alice");
      const tricky = makeCert(
        dir,
        "tricky",
        '/C=US/O=acme, inc./OU=eng+UID=42/CN=#al "x"/emailAddress=a@b.c',
        {
          multivalue: true,
        },
      );
      const principal = async (path: string) =>
        certificatePrincipal(new X509Certificate(await readFile(path)));
      assert.equal(await principal(plain.cert), "User:CN=alice,O=acme,C=US");
      assert.equal(
        await principal(tricky.cert),
        'User:emailAddress=a@b.c,CN=\\#al \\"x\\",OU=eng+UID=42,O=acme\\, inc.,C=US',
      );
    }));

  test("over real sockets: mTLS gives the client's principal, and a reload serves new handshakes without dropping old ones", () =>
    withTempDir(async (dir) => {
      makeCa(dir);
      const first = makeCert(dir, "first", "/CN=localhost/O=first", { ca: "ca" });
      const second = makeCert(dir, "second", "/CN=localhost/O=second", { ca: "ca" });
      const alice = makeCert(dir, "alice", "/O=acme/CN=alice", { ca: "ca" });
      const cert = join(dir, "server.pem");
      const key = join(dir, "server.key");
      await copyFile(first.cert, cert);
      await copyFile(first.key, key);
      const material = await TlsMaterial.load({
        certFile: cert,
        keyFile: key,
        caFile: join(dir, "ca.pem"),
        clientAuth: "required",
      });
      const principals: string[] = [];
      const server = createServer(material.serverOptions(), (socket) => {
        const peer = socket.getPeerX509Certificate();
        principals.push(socket.authorized && peer !== undefined ? certificatePrincipal(peer) : "none");
        socket.pipe(socket);
      });
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      const port = (server.address() as { port: number }).port;
      const ca = await readFile(join(dir, "ca.pem"));
      const open = async (withCert: boolean): Promise<TLSSocket> => {
        const socket = connect({
          host: "127.0.0.1",
          port,
          ca,
          servername: "localhost",
          ...(withCert ? { cert: await readFile(alice.cert), key: await readFile(alice.key) } : {}),
        });
        await once(socket, "secureConnect");
        return socket;
      };
      const echo = async (socket: TLSSocket, text: string) => {
        socket.write(text);
        const [data] = await once(socket, "data");
        return String(data);
      };
      try {
        const old = await open(true);
        assert.equal(await echo(old, "one"), "one");
        assert.deepEqual(principals, ["User:CN=alice,O=acme"]);
        assert.match(old.getPeerX509Certificate()?.subject ?? "", /O=first/);

        await copyFile(second.cert, cert);
        await copyFile(second.key, key);
        const reloaded = await material.reload();
        assert.ok(reloaded.ok);
        server.setSecureContext(reloaded.loaded.options);
        const fresh = await open(true);
        assert.match(fresh.getPeerX509Certificate()?.subject ?? "", /O=second/);
        assert.equal(await echo(old, "still open"), "still open");
        fresh.destroy();
        old.destroy();

        // Without a client certificate the server ends the handshake (with TLS 1.3 the client may
        // think itself connected first, so it writes and must get no echo).
        const refused = connect({ host: "127.0.0.1", port, ca, servername: "localhost" });
        const outcome = await new Promise<string>((resolve) => {
          refused.on("secureConnect", () => refused.write("x"));
          refused.on("data", () => resolve("echoed"));
          refused.on("error", () => resolve("refused"));
          refused.on("close", () => resolve("refused"));
        });
        refused.destroy();
        assert.equal(outcome, "refused");
        assert.equal(
          principals.length,
          2,
          "the certificate-less client never reached the connection handler",
        );
      } finally {
        server.close();
      }
    }));
});
