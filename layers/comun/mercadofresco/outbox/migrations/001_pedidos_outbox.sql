-- Orders and their transactional outbox (lesson 07-05, section 13).
-- The order row and its event row are written in ONE transaction (dominio/pedidos.py);
-- the relay publishes the event rows and marks them; a daily clean-up deletes them.
-- Unqualified names on purpose: the tables live in the connection's search_path
-- (a private schema per test, the default schema on Aurora).

CREATE TABLE pedidos (
    pedido_id         text        PRIMARY KEY,
    cliente_id        text        NOT NULL,
    email             text,
    lineas            jsonb       NOT NULL,
    importe_centimos  bigint      NOT NULL CHECK (importe_centimos >= 0),
    moneda            char(3)     NOT NULL DEFAULT 'EUR',
    estado            text        NOT NULL DEFAULT 'CREADO',
    creado_en         timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE outbox (
    id               uuid        PRIMARY KEY,
    -- Tie-breaker for rows created at the same instant (several events in one
    -- transaction): publication order is (creado_en, secuencia).
    secuencia        bigint      GENERATED ALWAYS AS IDENTITY,
    tipo_agregado    text        NOT NULL,
    agregado_id      text        NOT NULL,
    tipo_evento      text        NOT NULL,
    version          integer     NOT NULL CHECK (version > 0),
    payload          jsonb       NOT NULL,
    creado_en        timestamptz NOT NULL DEFAULT clock_timestamp(),
    publicado        boolean     NOT NULL DEFAULT false,
    publicado_en     timestamptz,
    -- Failed publication attempts (entries EventBridge rejected) and the last reason.
    intentos         integer     NOT NULL DEFAULT 0,
    ultimo_error     text,
    -- A row that keeps failing (or can never be sent, e.g. > 256 KB) is parked here
    -- instead of blocking the rows behind it; an alarm fires while any is parked.
    aparcado_en      timestamptz,
    motivo_aparcado  text,
    CHECK (publicado = (publicado_en IS NOT NULL))
);

-- The relay's claim reads only pending rows, in order: a partial index stays the size
-- of the backlog instead of growing with the whole history.
CREATE INDEX outbox_pendientes
    ON outbox (creado_en, secuencia)
    WHERE NOT publicado AND aparcado_en IS NULL;

-- "Is an earlier event of this aggregate still pending?" (per-aggregate order with
-- several relays): also partial, also backlog-sized.
CREATE INDEX outbox_pendientes_por_agregado
    ON outbox (tipo_agregado, agregado_id, creado_en, secuencia)
    WHERE NOT publicado AND aparcado_en IS NULL;

-- The daily clean-up deletes published rows by age.
CREATE INDEX outbox_publicados
    ON outbox (publicado_en)
    WHERE publicado;

-- Parked rows are few; the alarm's count and the operator's listing read this.
CREATE INDEX outbox_aparcados
    ON outbox (aparcado_en)
    WHERE aparcado_en IS NOT NULL;
