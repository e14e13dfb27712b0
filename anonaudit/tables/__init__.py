"""Published tables audited as a statistical office would: ``anonaudit tables``.

The tables are read into the model of :mod:`anonaudit.published`; the primary rules
(:mod:`anonaudit.tables.rules`) say which cells are sensitive; the attacker's arithmetic
over every table of a population together (:mod:`anonaudit.tables.system`,
:mod:`anonaudit.tables.attack`) says what each unpublished cell gives away, with a
certificate in published cells; :mod:`anonaudit.tables.reconstruct` asks how many records
they give back, group by group (``anonaudit reconstruct``).
"""
