package ops

const ping = "SELECT 1"
