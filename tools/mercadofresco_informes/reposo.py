"""What a deployed stack costs per day with no traffic, per line, from the template as a profile deploys it.

The README's idle-cost table ("Deploying") is this computation for the default and the ``prueba``
profile; ``tests/unit/test_coste_en_reposo.py`` holds the two equal and ``prueba`` at or below the
issue's 1.5 USD/day. Which lines apply and how many of each (interface endpoints x AZs, alarms,
secrets) is read from the resolved template, so a new endpoint or alarm moves the figure.

    python -m mercadofresco_informes.reposo prueba      # one profile's lines (samconfig.toml)
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from mercadofresco_local import RAIZ
from template_model import Template, profile_parameters
from template_model.wiring import function_props

if TYPE_CHECKING:
    from collections.abc import Mapping

# USD, us-east-1 list prices of 2025 (eu-south-2 is about 10 % more), as the README states them.
PRECIOS = {
    "nat_gateway_h": 0.045,
    "ipv4_publica_h": 0.005,
    "t4g_nano_h": 0.0042,
    "ebs_gp3_gb_mes": 0.08,
    "ec2_monitorizacion_detallada_mes": 7 * 0.30,  # 7 one-minute EC2 metrics at 0.30 each
    "endpoint_interfaz_az_h": 0.01,
    "aurora_acu_h": 0.12,
    "aurora_en_pausa_dia": 0.01,  # storage only (0.10/GB-month, a few GB)
    "lambda_arm64_gb_s": 0.0000133334,
    "valkey_gb_h": 0.084,
    "alarma_mes": 0.10,
    "kms_clave_mes": 1.0,
    "secreto_mes": 0.40,
    "rds_proxy_acu_h": 0.015,
}
DIAS_MES = 30
ALARMAS_GRATIS = 10  # CloudWatch's always-free tier
VALKEY_MINIMO_GB = 0.1  # ElastiCache Serverless bills at least 100 MB
VOLUMEN_NAT_GB = 8  # InstanciaNat's root volume
RELAY = "Outbox/OutboxFunction"  # its stack path (unidades/outbox.yaml)
DRENAJE_S_POR_MINUTO = 50  # the draining relay's run per 1-minute schedule (Timeout 60)
RESTO = 0.05  # DynamoDB, SQS, SNS, EventBridge, Scheduler, logs: on demand, an upper bound without traffic


def plantilla_desplegada(parametros: Mapping[str, str]) -> Template:
    """The template as a deploy with these parameters reads it (the others at their own defaults)."""
    return Template(path=RAIZ / "template.yaml", parameters=dict(parametros))


def parametros_del_perfil(perfil: str) -> dict[str, str]:
    """A ``samconfig.toml`` environment's parameter overrides (``default``, ``prueba``...)."""
    return profile_parameters(perfil, RAIZ / "samconfig.toml")


def creados(p: Template, tipo: str) -> list[dict[str, Any]]:
    """The resources of ``tipo`` a deploy creates, in the root stack and in the units it creates (the network)."""
    return [r for _ruta, t in p.walk() for r in t.of_type(tipo).values()]


def coste_en_reposo(parametros: Mapping[str, str]) -> dict[str, float]:
    """USD/day per README line (lines that do not apply are 0), before rounding."""
    p = plantilla_desplegada(parametros)
    h = 24
    lineas: dict[str, float] = {}
    lineas["NAT gateway"] = PRECIOS["nat_gateway_h"] * h * len(creados(p, "AWS::EC2::NatGateway"))
    lineas["NAT instance"] = len(creados(p, "AWS::EC2::Instance")) * (
        PRECIOS["t4g_nano_h"] * h
        + (VOLUMEN_NAT_GB * PRECIOS["ebs_gp3_gb_mes"] + PRECIOS["ec2_monitorizacion_detallada_mes"]) / DIAS_MES
    )
    lineas["the NAT's public IPv4"] = PRECIOS["ipv4_publica_h"] * h * len(creados(p, "AWS::EC2::EIP"))
    endpoints = creados(p, "AWS::EC2::VPCEndpoint")
    interfaces = [r for r in endpoints if r["Properties"].get("VpcEndpointType") == "Interface"]
    zonas = sum(len(r["Properties"]["SubnetIds"]) for r in interfaces)  # one billed interface per subnet (AZ)
    lineas["VPC interface endpoints"] = PRECIOS["endpoint_interfaz_az_h"] * h * zonas
    if p.condition("CreateAurora"):
        minimo = float(p.parameter("AuroraMinCapacity"))
        aurora = minimo * PRECIOS["aurora_acu_h"] * h if minimo else PRECIOS["aurora_en_pausa_dia"]
        proxy = 8 * PRECIOS["rds_proxy_acu_h"] * h * len(creados(p, "AWS::RDS::DBProxy"))
        lineas["Aurora Serverless v2"] = aurora + proxy
    else:
        lineas["Aurora Serverless v2"] = 0.0
    if p.condition("SenalOutboxValkey"):
        lineas["outbox relay Lambda"] = 0.01  # returns at once: 1,440 short invocations a day
    else:
        unidad, relay = p.locate(RELAY)
        memoria_gb = int(unidad.resolve(function_props(unidad.doc, relay)["MemorySize"])) / 1024
        lineas["outbox relay Lambda"] = 24 * 60 * DRENAJE_S_POR_MINUTO * memoria_gb * PRECIOS["lambda_arm64_gb_s"]
    lineas["ElastiCache Serverless Valkey"] = (
        VALKEY_MINIMO_GB * PRECIOS["valkey_gb_h"] * h if p.condition("CreateValkey") else 0.0
    )
    alarmas = len(creados(p, "AWS::CloudWatch::Alarm"))
    lineas["CloudWatch alarms"] = max(0, alarmas - ALARMAS_GRATIS) * PRECIOS["alarma_mes"] / DIAS_MES
    secretos = len(creados(p, "AWS::SecretsManager::Secret")) + (1 if p.condition("CreateAurora") else 0)
    clave = PRECIOS["kms_clave_mes"] if p.condition("CreateKmsKey") else 0.0
    lineas["KMS key + secrets"] = (clave + secretos * PRECIOS["secreto_mes"]) / DIAS_MES
    lineas["DynamoDB, SQS, SNS, EventBridge, Scheduler, logs"] = RESTO
    return lineas


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    perfil = argv[0] if argv else "default"
    lineas = coste_en_reposo(parametros_del_perfil(perfil))
    for linea, usd in lineas.items():
        print(f"{usd:6.2f}  {linea}")
    print(f"{sum(lineas.values()):6.2f}  total USD/day ({perfil})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
