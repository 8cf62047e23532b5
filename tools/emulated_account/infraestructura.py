"""The "existing infrastructure" the deploy level gives the stack: a database and a Valkey as AWS has them.

Aurora and ElastiCache speak TLS and ask for a password; the stack's functions insist on both
(``sslmode=verify-full``, ``VALKEY_TLS`` on, the AUTH token from a secret). The shared
servers at 127.0.0.1 have neither, and reconfiguring them would disturb every other run, so the
level starts its own, reachable from the Lambda containers on the Docker bridge only:

- :class:`AuroraDelNivel`: a private PostgreSQL (``initdb``), TLS on, ``scram-sha-256`` for any
  connection that is not loopback; the admin password is the level's, the runtime role is
  created by the stack's own migrations custom resource, as in an account.
- :class:`ValkeyDelNivel`: a private ``redis-server`` with a TLS port and ``requirepass``.
- :class:`Certificados`: a CA of the run and a server certificate for the bridge address; the
  containers trust the CA through ``SSL_CERT_FILE`` and ``AURORA_SSLROOTCERT`` (ElastiCache's
  certificate chains to a public CA the runtime already trusts, Aurora's to the layer's RDS
  bundle; this one to neither).

Everything lives in one temporary directory and is stopped and deleted at the end.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sam_emulator.moto_server import free_port
from sam_emulator.private_postgres import PrivatePostgres
from sam_emulator.private_redis import PrivateRedis

if TYPE_CHECKING:
    from pathlib import Path

PUENTE = os.environ.get("MF_DEPLOY_BRIDGE", "172.17.0.1")  # docker0's address: the host seen from a container


@dataclass(frozen=True, slots=True)
class Certificados:
    """``ca.pem`` (what the containers trust) and ``servidor.pem``/``servidor.key`` for ``ip``, in ``carpeta``."""

    carpeta: Path

    @property
    def ca(self) -> Path:
        return self.carpeta / "ca.pem"

    @property
    def certificado(self) -> Path:
        return self.carpeta / "servidor.pem"

    @property
    def clave(self) -> Path:
        return self.carpeta / "servidor.key"

    @classmethod
    def emitir(cls, carpeta: Path, ip: str, dias: int = 2) -> Certificados:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        ahora = datetime.datetime.now(datetime.UTC)
        hasta = ahora + datetime.timedelta(days=dias)
        clave_ca, clave = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
        nombre_ca = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mercadofresco deploy level CA")])
        ca = (
            x509.CertificateBuilder(subject_name=nombre_ca, issuer_name=nombre_ca)
            .public_key(clave_ca.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(ahora)
            .not_valid_after(hasta)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(clave_ca.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(clave_ca.public_key()), critical=False)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(clave_ca, hashes.SHA256())
        )
        servidor = (
            x509.CertificateBuilder(
                subject_name=x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ip)]), issuer_name=nombre_ca
            )
            .public_key(clave.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(ahora)
            .not_valid_after(hasta)
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))]), critical=False)
            # Python 3.13 verifies strictly (VERIFY_X509_STRICT): without the key identifiers the chain is refused.
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(clave.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(clave_ca.public_key()), critical=False)
            .sign(clave_ca, hashes.SHA256())
        )
        certificados = cls(carpeta)
        carpeta.mkdir(parents=True, exist_ok=True)
        certificados.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        certificados.certificado.write_bytes(servidor.public_bytes(serialization.Encoding.PEM))
        certificados.clave.write_bytes(
            clave.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        certificados.clave.chmod(0o600)
        return certificados


@dataclass
class AuroraDelNivel(PrivatePostgres):
    """PostgreSQL with TLS and passwords on the bridge (loopback keeps trust, for the level's own checks)."""

    certificados: Certificados | None = None
    password: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    database: str = "mercadofresco"

    nombre = "PostgreSQL (the level's Aurora)"

    def _options(self) -> dict[str, str]:
        assert self.certificados is not None and self._dir is not None
        # The server (user postgres) must own its key: a copy in its own directory.
        for origen in (self.certificados.certificado, self.certificados.clave):
            destino = self._dir / origen.name
            if not destino.exists():
                shutil.copy2(origen, destino)
                self._as_server(destino)
        return {
            **super()._options(),
            "listen_addresses": f"127.0.0.1,{PUENTE}",
            "ssl": "on",
            "ssl_cert_file": str(self._dir / self.certificados.certificado.name),
            "ssl_key_file": str(self._dir / self.certificados.clave.name),
            "password_encryption": "scram-sha-256",
        }

    def start(self) -> AuroraDelNivel:
        super().start()
        assert self._dir is not None
        with (self._dir / "datos" / "pg_hba.conf").open("a") as hba:
            hba.write("hostssl all all 0.0.0.0/0 scram-sha-256\n")  # the containers: TLS and a password only
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f"ALTER ROLE postgres PASSWORD '{self.password}'")
            conn.execute(f"CREATE DATABASE {self.database}")
            conn.execute("SELECT pg_reload_conf()")
        return self

    def secreto_admin(self) -> dict[str, object]:
        """What the ``AuroraAdminSecretArn`` secret holds (as RDS writes a managed master secret)."""
        return {"username": "postgres", "password": self.password, "host": PUENTE, "port": self.port}


@dataclass
class ValkeyDelNivel(PrivateRedis):
    """redis-server with a TLS port on the bridge and an AUTH token (plain loopback port for the level)."""

    certificados: Certificados | None = None
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    puerto_tls: int = field(default_factory=free_port)

    nombre = "redis-server (the level's Valkey)"

    @property
    def url(self) -> str:
        return f"redis://:{self.token}@127.0.0.1:{self.port}/0"

    @property
    def endpoint(self) -> str:
        return f"{PUENTE}:{self.puerto_tls}"

    def _arguments(self) -> list[str]:
        assert self.certificados is not None
        return [
            *super()._arguments(),
            "--bind", f"127.0.0.1 {PUENTE}",
            "--tls-port", str(self.puerto_tls),
            "--tls-cert-file", str(self.certificados.certificado),
            "--tls-key-file", str(self.certificados.clave),
            "--tls-ca-cert-file", str(self.certificados.ca),
            "--tls-auth-clients", "no",
            "--requirepass", self.token,
        ]  # fmt: skip
