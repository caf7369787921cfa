/**
 * The principal of a client that authenticated with a TLS certificate: `User:` and the
 * certificate's subject in RFC 4514 form, most specific attribute first, as Kafka writes it
 * (`User:CN=alice,OU=eng,O=acme,C=US`). Short attribute names (CN, O, OU, C, L, ST, UID,
 * emailAddress; a dotted OID for others), values escaped as RFC 4514 asks (`\,` `\+` `\"` `\\`
 * `\<` `\>` `\;`, a leading `#` or space, a trailing space), attributes of one multi-valued RDN
 * joined with `+` in certificate order. The same certificate always gives the same string, so ACL
 * rules can name it.
 *
 * Only a certificate the TLS layer verified may be turned into a principal (`socket.authorized`
 * true, the listener's client authentication `required`); the caller checks that.
 */
import type { X509Certificate } from "node:crypto";

/**
 * Node writes a subject as OpenSSL's RFC 2253 escaping with one RDN per line, in certificate
 * order (most general first), and ` + ` between the attributes of a multi-valued RDN; control
 * characters are escaped, so no value holds a newline.
 */
export function certificateSubject(certificate: X509Certificate): string {
  return certificate.subject
    .split("\n")
    .filter((rdn) => rdn.length > 0)
    .reverse()
    .map((rdn) => rdn.split(" + ").join("+"))
    .join(",");
}

export function certificatePrincipal(certificate: X509Certificate): string {
  return `User:${certificateSubject(certificate)}`;
}
