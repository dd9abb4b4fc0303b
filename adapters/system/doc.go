// Package system implements the ports that wrap the machine itself: the
// wall clock (ports.Clock) and id generation (ports.IDGenerator). Their
// zero values are ready to use.
package system
