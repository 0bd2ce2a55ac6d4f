"""Certificates for the vendors' hostnames, minted on the fly (``agent.hostnames: real``).

An agent that calls ``https://api.github.com`` through Ancha gets a certificate for
``api.github.com`` signed by an authority made for this server process alone: its key is
made in memory and never written anywhere, and each hostname's certificate is made once,
on first use, then kept for the process (one TLS context per name). Agents trust the
authority through the CA file the environment's context carries (``hostnames.ca_pem``).
The certificates are valid over every span a simulated clock can read (``tls.VALID_FROM``
to ``tls.VALID_UNTIL``), since agents verify them at the world's time.
"""

from __future__ import annotations

import atexit
import shutil
import ssl
import tempfile
import threading
from functools import cache
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ancha.server.tls import VALID_FROM, VALID_UNTIL

ALPN = ["http/1.1"]
"""What the interceptor speaks: clients that offer HTTP/2 (curl, Node) settle on HTTP/1.1."""


class Minter:
    """An authority that signs a certificate per hostname, and the TLS contexts that serve them."""

    def __init__(self) -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Ancha vendor hostnames CA")])
        self._ca = (x509.CertificateBuilder().subject_name(self._name).issuer_name(self._name)
                    .public_key(self._key.public_key()).serial_number(x509.random_serial_number())
                    .not_valid_before(VALID_FROM).not_valid_after(VALID_UNTIL)
                    .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                    .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                 content_commitment=False, key_encipherment=False,
                                                 data_encipherment=False, key_agreement=False,
                                                 encipher_only=False, decipher_only=False), critical=True)
                    .add_extension(x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()),
                                   critical=False)
                    .sign(self._key, hashes.SHA256()))
        self.ca_pem = self._ca.public_bytes(serialization.Encoding.PEM).decode()
        """The authority's certificate (PEM): what agents must trust."""
        self._leaf_key = ec.generate_private_key(ec.SECP256R1())
        self._folder = Path(tempfile.mkdtemp(prefix="ancha-hostnames-"))
        self._key_file = self._folder / "leaf.key"
        self._key_file.write_bytes(self._leaf_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        self._key_file.chmod(0o600)
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def context(self, hostname: str) -> ssl.SSLContext:
        """The server-side TLS context that presents ``hostname``'s certificate (made on first use)."""
        hostname = hostname.lower().rstrip(".")
        found = self._contexts.get(hostname)
        if found is not None:
            return found
        with self._lock:
            found = self._contexts.get(hostname)
            if found is None:
                found = self._contexts[hostname] = self._make(hostname)
        return found

    def _make(self, hostname: str) -> ssl.SSLContext:
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)]))
                .issuer_name(self._name).public_key(self._leaf_key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(VALID_FROM).not_valid_after(VALID_UNTIL)
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()),
                               critical=False)
                .sign(self._key, hashes.SHA256()))
        chain = self._folder / f"{hostname}.pem"
        chain.write_bytes(cert.public_bytes(serialization.Encoding.PEM) + self.ca_pem.encode())
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(chain, self._key_file)
        context.set_alpn_protocols(ALPN)
        return context

    def server_context(self, default_host: str) -> ssl.SSLContext:
        """A context for a listener that picks each connection's certificate by the name the
        client asks for (SNI); ``default_host``'s when it names none. Made once per default host."""
        key = "\0sni:" + default_host.lower()
        found = self._contexts.get(key)
        if found is None:
            with self._lock:
                found = self._contexts.get(key)
                if found is None:
                    found = self._make(default_host.lower())
                    found.sni_callback = self._by_name
                    self._contexts[key] = found
        return found

    def _by_name(self, connection: ssl.SSLObject | ssl.SSLSocket, name: str | None, _: ssl.SSLContext) -> None:
        if name:
            connection.context = self.context(name)

    def close(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)


@cache
def minter() -> Minter:
    """This process's minting authority, made on first use (a run without real hostnames never pays
    for it); its folder of certificates and their key is removed when the process exits."""
    made = Minter()
    atexit.register(made.close)
    return made
