"""The foundation reads on the apps' behalf in ``vectors`` (nearest neighbours under an owner's filter)
and ``bm25`` (keyword statistics); what a person or an operator sees is read by each app's ``selectors``."""
