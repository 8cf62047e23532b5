// The least-privilege check's evaluator: @cloud-copilot/iam-simulate, one process for a whole run.
//
// One JSON object a line on stdin, one answer a line on stdout (least_privilege.simulador speaks it):
//   {"identidad": {"<name>": <policy document>, ...}, "recurso": {...}}  -> {"ok": true}  (validated once, kept)
//   {"consultas": [<query>, ...]}                          -> {"resultados": [<result>, ...]}
// query:  {"principal": ARN or service principal, "accion": "sqs:SendMessage", "recurso": ARN, "cuenta": the
//          resource's account, "contexto": {key: value or [values]}, "identidad": [names], "recurso_politica": name or null}
// result: {"decision": "Allowed" | "ImplicitlyDenied" | "ExplicitlyDenied", "usadas": [[name, statement index], ...]}
//         or {"error": "..."}: iam-simulate refused the query (an unknown action, a resource of the wrong
//         type, a context key the action does not have): the request was modelled wrong, never a guess.
//
// iam-simulate decides every request (runSimulation: it validates the policies, the action, the resource
// type and every context key, then evaluates identity and resource policies with AWS's logic, KMS key
// policies included). One gap is closed here: it drops the context keys whose name ends in a variable
// written after a colon (kms:EncryptionContext:<key>; its matcher looks for a "/"), so a key-policy
// condition on an encryption context could never hold. A query that carries such keys is validated by
// runSimulation and then decided by the same engine (authorize) with those keys kept, nothing else changed.
import { runSimulation } from '@cloud-copilot/iam-simulate'
import { createValidatedPolicy, loadPolicy, validateIdentityPolicy, validateResourcePolicy } from '@cloud-copilot/iam-policy'
import { createRequire } from 'node:module'
import path from 'node:path'
import readline from 'node:readline'
import { pathToFileURL } from 'node:url'

const motor = path.join(path.dirname(createRequire(import.meta.url).resolve('@cloud-copilot/iam-simulate')), '..', 'esm')
const interno = (modulo) => import(pathToFileURL(path.join(motor, modulo)).href)
const { authorize } = await interno('core_engine/CoreSimulatorEngine.js')
const { AwsRequestImpl } = await interno('request/request.js')
const { RequestContextImpl } = await interno('requestContext.js')
const { DiscoveryContextKeyConstraints } = await interno('context_keys/discoveryContextKeyConstraints.js')
const { normalizeSimulationParameters } = await interno('simulation_engine/simulationEngine.js')
const { isWildcardOnlyAction } = await import('@cloud-copilot/iam-simulate')

const CONTEXTO_CIFRADO = /^kms:encryptioncontext:.+/i
const politicas = new Map()

// The Allow statements that matched: each identity statement by its policy's name, each resource-policy
// statement (iam-simulate names no resource policy) by the query's.
function usadas(analisis, consulta) {
  return [
    ...(analisis.identityAnalysis?.allowStatements ?? []).map((s) => [s.policyId, s.statement.index() - 1]),
    ...(analisis.resourceAnalysis?.allowStatements ?? []).map((s) => [consulta.recurso_politica, s.statement.index() - 1])
  ]
}

function documento(nombre) {
  const politica = politicas.get(nombre)
  if (politica === undefined) throw new Error(`unknown policy ${nombre}`)
  return politica
}

async function evaluar(c) {
  const simulacion = {
    request: {
      principal: c.principal,
      action: c.accion,
      resource: { resource: c.recurso, accountId: c.cuenta },
      contextVariables: c.contexto
    },
    identityPolicies: c.identidad.map((nombre) => ({ name: nombre, policy: documento(nombre) })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: c.recurso_politica ? documento(c.recurso_politica) : undefined
  }
  const respuesta = await runSimulation(simulacion, {})
  if (respuesta.resultType === 'error') return { error: JSON.stringify(respuesta.errors) }
  if (respuesta.resultType !== 'single') return { error: `resource ${c.recurso} is a pattern, not the ARN of one resource` }
  const ignoradas = respuesta.result.ignoredContextKeys ?? []
  const otras = ignoradas.filter((k) => !CONTEXTO_CIFRADO.test(k))
  if (otras.length > 0) return { error: `context keys ${otras.join(', ')} do not apply to ${c.accion} on ${c.recurso}` }
  if (ignoradas.length === 0) return { decision: respuesta.overallResult, usadas: usadas(respuesta.result.analysis, c) }
  // The same engine, the encryption-context keys kept (each one string) beside the rest as runSimulation
  // normalised them (a multivalued key an array, a single-valued one its value).
  const [servicio, accion] = c.accion.split(':')
  const { validContextValues } = await normalizeSimulationParameters(simulacion, undefined)
  const contexto = { ...validContextValues }
  for (const clave of ignoradas) contexto[clave] = [c.contexto[clave]].flat()[0]
  const analisis = authorize({
    request: new AwsRequestImpl(
      c.principal,
      { resource: c.recurso, accountId: c.cuenta },
      c.accion,
      new RequestContextImpl(contexto),
      await isWildcardOnlyAction(servicio, accion)
    ),
    sessionPolicy: undefined,
    identityPolicies: simulacion.identityPolicies.map((p) => loadPolicy(p.policy, { name: p.name })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy: simulacion.resourcePolicy ? loadPolicy(simulacion.resourcePolicy, { name: c.recurso_politica }) : undefined,
    permissionBoundaries: undefined,
    vpcEndpointPolicies: undefined,
    simulationParameters: { simulationMode: 'Strict', discoveryContextKeyConstraints: new DiscoveryContextKeyConstraints([]) },
    serviceSettings: { s3: {} }
  })
  return { decision: analisis.result, usadas: usadas(analisis, c) }
}

async function atender(mensaje) {
  if (!mensaje.consultas) {
    for (const [nombre, politica] of Object.entries(mensaje.identidad ?? {}))
      politicas.set(nombre, createValidatedPolicy(politica, validateIdentityPolicy))
    for (const [nombre, politica] of Object.entries(mensaje.recurso ?? {}))
      politicas.set(nombre, createValidatedPolicy(politica, validateResourcePolicy))
    return { ok: true }
  }
  const resultados = []
  for (const consulta of mensaje.consultas) {
    try {
      resultados.push(await evaluar(consulta))
    } catch (error) {
      resultados.push({ error: String(error?.message ?? error) })
    }
  }
  return { resultados }
}

const lineas = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const linea of lineas) {
  let respuesta
  try {
    respuesta = await atender(JSON.parse(linea))
  } catch (error) {
    respuesta = { fallo: String(error?.stack ?? error) }
  }
  process.stdout.write(JSON.stringify(respuesta) + '\n')
}
