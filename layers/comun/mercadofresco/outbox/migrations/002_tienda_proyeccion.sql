-- The store API's idempotency keys and the order-state projection (issue 16).
-- Idempotent on its own (IF NOT EXISTS everywhere), like every file here: it is safe
-- even on a database where someone applied it by hand before schema_migrations knew.

-- POST /pedidos: the client's Idempotency-Key, claimed in the same transaction as the
-- order and its PedidoCreado (dominio/solicitudes.py). huella is the SHA-256 of the
-- canonical request body: the same key with another body is refused, never answered
-- with another order. The key row is inserted first (it is the claim a concurrent retry
-- waits on), so the foreign key is checked at commit.
CREATE TABLE IF NOT EXISTS solicitudes_pedido (
    clave_idempotencia  text        PRIMARY KEY,
    huella              text        NOT NULL,
    pedido_id           text        NOT NULL,
    creado_en           timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT solicitudes_pedido_pedido_fk FOREIGN KEY (pedido_id)
        REFERENCES pedidos (pedido_id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED
);

-- The projection (functions/proyeccion, dominio/proyeccion.py) keeps pedidos.estado from
-- the workflow's outcome events. 001 created estado; estado_rango orders the states so a
-- late, older event never overwrites a later one (the lesson's "if version > version_actual").
ALTER TABLE pedidos ADD COLUMN IF NOT EXISTS estado text NOT NULL DEFAULT 'CREADO';
ALTER TABLE pedidos ADD COLUMN IF NOT EXISTS estado_rango smallint NOT NULL DEFAULT 0;
ALTER TABLE pedidos ADD COLUMN IF NOT EXISTS estado_motivo text;
ALTER TABLE pedidos ADD COLUMN IF NOT EXISTS estado_evento_id text;
ALTER TABLE pedidos ADD COLUMN IF NOT EXISTS estado_actualizado_en timestamptz;
