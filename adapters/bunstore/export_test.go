package bunstore

// RevokedFamiliesQuery is the query of RefreshStore.RevokedFamilies, for
// the query-plan test.
const RevokedFamiliesQuery = revokedFamiliesQuery
