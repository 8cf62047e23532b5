-- GET /pedidos/{id} answers only the caller whose request created the order (issue 35): it
-- looks the order's request up by pedido_id (dominio/solicitudes.py, consultar_pedido), once a read.
CREATE INDEX IF NOT EXISTS solicitudes_pedido_pedido_id ON solicitudes_pedido (pedido_id);
