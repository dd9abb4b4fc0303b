package cli

// Commands is the table of commands, in the order the usage lists them. A
// new command is one file holding its Command and one entry here.
func Commands() []Command {
	return []Command{
		serveCommand,
		migrateCommand,
		usersAddCommand,
		usersListCommand,
		usersDisableCommand,
		usersEnableCommand,
		usersSetPasswordCommand,
		usersAdminGrantCommand,
		usersAdminRevokeCommand,
		keysRotateCommand,
		keysListCommand,
		keysRevokeCommand,
		auditCommand,
		exportCommand,
		importCommand,
		backupCommand,
		healthCommand,
		versionCommand,
	}
}
