// The most items one page of events or of output lines holds, without TypeBox: the client's paging
// loop reads them, and a schema module would load the whole of TypeBox into every CLI command.
export const EVENT_PAGE_MAX = 5000;
export const OUTPUT_PAGE_MAX = 5000;
