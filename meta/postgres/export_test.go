package postgres

// Migrations and MigrationsTable expose the schema to the external tests' upgrade test.
var (
	Migrations      = migrations
	MigrationsTable = newDialect().MigrationsTable
)
