"""A local certificate authority, so that replicas whose official SDK only talks https work.

Some official clients refuse a plain-http base URL outright ("API base URL must use
scheme https://"), so the server also listens with TLS and hands
those tools' URLs out on that listener (``ToolSpec.secure``). Its certificate comes from a
certificate authority made for this server alone: its key never leaves the process, and
agents trust it through the CA file the context carries (``tls.ca_pem``), which the
runner adds to the platform's usual roots for them (``SSL_CERT_FILE``,
``REQUESTS_CA_BUNDLE``, ``NODE_EXTRA_CA_CERTS``).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ancha.world.settings import START_YEARS

VALID_FROM = dt.datetime(START_YEARS[0], 1, 1, tzinfo=dt.UTC)
VALID_UNTIL = dt.datetime(START_YEARS[1] + 1, 12, 31, 23, 59, 59, tzinfo=dt.UTC)
"""The certificates are valid over every simulated span a world can have (a ``clock.start``
from 1970, a clock that ends by 2200, with a year to spare) as well as today: agents run on
the world's clock (libfaketime), and verify the replicas' certificates at its time."""


@dataclass(frozen=True, slots=True)
class LocalTLS:
    """A server certificate and the authority that signed it, as files uvicorn can load."""

    ca_pem: str
    """The authority's certificate (PEM): what clients must trust."""
    cert_file: Path
    key_file: Path

    @classmethod
    def create(cls, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> LocalTLS:
        """A new authority and a certificate for ``hosts`` (IP addresses or names)."""
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Ancha local CA")])
        ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
              .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(VALID_FROM).not_valid_after(VALID_UNTIL)
              .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
              .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                           content_commitment=False, key_encipherment=False,
                                           data_encipherment=False, key_agreement=False, encipher_only=False,
                                           decipher_only=False), critical=True)
              .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
              .sign(ca_key, hashes.SHA256()))
        key = ec.generate_private_key(ec.SECP256R1())
        names: list[x509.GeneralName] = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
                .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(VALID_FROM).not_valid_after(VALID_UNTIL)
                .add_extension(x509.SubjectAlternativeName(names), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                               critical=False)
                .sign(ca_key, hashes.SHA256()))
        folder = Path(tempfile.mkdtemp(prefix="ancha-tls-"))
        cert_file, key_file = folder / "server.pem", folder / "server.key"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        key_file.chmod(0o600)
        return cls(ca.public_bytes(serialization.Encoding.PEM).decode(), cert_file, key_file)


def local_tls(hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> LocalTLS:
    """This process's authority and certificate for ``hosts``: every server of one process
    shares them, so a client trusts them all with one CA."""
    return _made(tuple(hosts))


@cache
def _made(hosts: tuple[str, ...]) -> LocalTLS:
    return LocalTLS.create(hosts)
