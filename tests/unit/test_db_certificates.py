"""The RDS CA bundle the layer ships (issue 26): what Aurora's verify-full trusts, checked certificate by certificate.

Provenance and the cross-checks against independent copies: layers/comun/mercadofresco/certificados/README.md.
"""

from __future__ import annotations

import datetime
import hashlib
import re

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from mercadofresco import db

# The whole file as reviewed (README next to it); `make rds-ca` changes it, and this with it.
SHA256_DEL_FICHERO = "b12f33253cb676bfc8674a3974f625b374d52003e111a007ba07c796c1312fbe"
# Amazon Root CA 1, as amazontrust.com publishes it (RDS Proxy's ACM certificates chain to it).
AMAZON_ROOT_CA_1 = "8ecde6884f3d87b1125ba31ac3fcb13d7016de7f57cc904fe1cb97c6ae98196e"
# "Amazon RDS <region> Root CA <key> G1" (AWS's RDS TLS guide); Beta us-east-1 and Preview us-east-2 are
# RDS's own pre-release endpoints, in the same bundle.
_SUJETO_RDS = re.compile(
    r"^Amazon RDS (?:(?:Beta|Preview) )?(?P<region>[a-z]{2}(?:-gov)?-[a-z]+-\d)"
    r" Root CA (?P<tipo>RSA2048|RSA4096|ECC384) G1$"
)


def _certificados() -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(db.RDS_CA_BUNDLE.read_bytes())


def _cn(nombre: x509.Name) -> str:
    return str(nombre.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value)


def _firmado_por_si_mismo(c: x509.Certificate) -> bool:
    """The certificate's signature verifies with its own public key (not just issuer == subject)."""
    clave = c.public_key()
    algoritmo = c.signature_hash_algorithm
    assert algoritmo is not None
    try:
        if isinstance(clave, rsa.RSAPublicKey):
            clave.verify(c.signature, c.tbs_certificate_bytes, padding.PKCS1v15(), algoritmo)
        elif isinstance(clave, ec.EllipticCurvePublicKey):
            clave.verify(c.signature, c.tbs_certificate_bytes, ec.ECDSA(algoritmo))
        else:
            return False
    except InvalidSignature:
        return False
    return c.issuer == c.subject


def test_the_layer_ships_the_reviewed_bundle() -> None:
    assert hashlib.sha256(db.RDS_CA_BUNDLE.read_bytes()).hexdigest() == SHA256_DEL_FICHERO


def test_every_certificate_is_a_ca_that_may_sign_certificates() -> None:
    certificados = _certificados()
    assert len(certificados) == 103  # 34 RDS sites (32 regions, Beta, Preview) x 3 roots + Amazon Root CA 1
    for c in certificados:
        restricciones = c.extensions.get_extension_for_class(x509.BasicConstraints).value
        uso = c.extensions.get_extension_for_class(x509.KeyUsage).value
        assert restricciones.ca and uso.key_cert_sign, _cn(c.subject)


def test_the_rds_roots_are_self_signed_current_and_named_per_region() -> None:
    ahora = datetime.datetime.now(datetime.UTC)
    rds = [c for c in _certificados() if _cn(c.subject).startswith("Amazon RDS ")]
    assert len(rds) == 102
    # Three per site, one per key type: a region's Aurora may use any of the three CAs.
    por_sitio: dict[str, set[str]] = {}
    for c in rds:
        nombre = _SUJETO_RDS.match(_cn(c.subject))
        assert nombre, _cn(c.subject)
        assert _firmado_por_si_mismo(c), _cn(c.subject)
        assert c.not_valid_before_utc <= ahora < c.not_valid_after_utc, _cn(c.subject)
        por_sitio.setdefault(_cn(c.subject).split(" Root CA ")[0], set()).add(nombre["tipo"])
    assert len(por_sitio) == 34
    assert all(t == {"RSA2048", "RSA4096", "ECC384"} for t in por_sitio.values()), por_sitio
    assert "Amazon RDS eu-south-2" in por_sitio  # samconfig.toml's region


def test_amazon_root_ca_1_is_there_for_rds_proxy() -> None:
    huellas = {c.fingerprint(hashes.SHA256()).hex(): c for c in _certificados()}
    assert AMAZON_ROOT_CA_1 in huellas
    assert _firmado_por_si_mismo(huellas[AMAZON_ROOT_CA_1])


def test_a_tampered_certificate_is_not_taken_for_self_signed() -> None:
    # The self-signature check can fail: one flipped byte in the signed part and it does.
    (c, *_) = _certificados()
    der = bytearray(c.public_bytes(serialization.Encoding.DER))
    inicio = der.index(c.tbs_certificate_bytes) + len(c.tbs_certificate_bytes) // 2
    der[inicio] ^= 0x01
    try:
        alterado = x509.load_der_x509_certificate(bytes(der))
    except ValueError:
        pytest.skip("the flipped byte broke the DER structure")
    assert not _firmado_por_si_mismo(alterado)
