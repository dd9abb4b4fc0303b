// Package system implements the ports that wrap the machine itself: the
// wall clock (ports.Clock), id generation (ports.IDGenerator) and secrets
// (ports.SecretSource). Their zero values are ready to use.
package system
