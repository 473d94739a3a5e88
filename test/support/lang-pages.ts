// Generated OCR test pages in the languages of the `languages` option: known text rendered with a
// Noto font (headless Chromium prints HTML to PDF), rasterised by pdftoppm, mildly degraded
// (blur, Gaussian noise, specks) and written as grey PNGs. The known text is the reference.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";

/** Text per language (each a short passage written for these tests, or the first article of
 * the Universal Declaration of Human Rights, which the UN publishes for free use). */
export const langTexts: Record<string, string> = {
  eng: "All human beings are born free and equal in dignity and rights. They are endowed with reason and conscience and should act towards one another in a spirit of brotherhood. On a grey morning in March the ferry left the harbour late, and the few passengers on deck watched the gulls follow the boat until the lighthouse disappeared behind the rain.",
  deu: "Alle Menschen sind frei und gleich an Würde und Rechten geboren. Sie sind mit Vernunft und Gewissen begabt und sollen einander im Geist der Brüderlichkeit begegnen. Über den Dächern der Stadt zogen schwere Wolken auf, während Jürgen mit seiner Großmutter über die Brücke ging. Sie erzählte von früheren Zeiten, als man im Winter Äpfel im Keller lagerte und größere Geschäfte kaum gab.",
  fra: "Tous les êtres humains naissent libres et égaux en dignité et en droits. Ils sont doués de raison et de conscience et doivent agir les uns envers les autres dans un esprit de fraternité. À côté de la gare, un café étroit accueillait chaque matin des ouvriers pressés, des élèves en retard et quelques voyageurs égarés. Le garçon servait des croissants dorés et un thé brûlant.",
  spa: "Todos los seres humanos nacen libres e iguales en dignidad y derechos y, dotados como están de razón y conciencia, deben comportarse fraternalmente los unos con los otros. ¿Quién no recuerda aquellas tardes de verano en el pueblo? Los niños corrían por la plaza mientras los mayores discutían sobre la cosecha y la próxima feria. ¡Qué tiempos aquellos, cuando el señor Núñez abría su librería!",
  ita: "Tutti gli esseri umani nascono liberi ed eguali in dignità e diritti. Essi sono dotati di ragione e di coscienza e devono agire gli uni verso gli altri in spirito di fratellanza. Più tardi, quando la città si svuotò, il vecchio libraio chiuse la bottega e salì lentamente verso la collina. Perché nessuno sapeva dove andasse ogni sera? Forse cercava soltanto un caffè già pronto.",
  por: "Todos os seres humanos nascem livres e iguais em dignidade e em direitos. Dotados de razão e de consciência, devem agir uns para com os outros em espírito de fraternidade. Na manhã seguinte, a avó acordou cedo, acendeu o fogão e preparou o pão de milho com açúcar e canela. As crianças ouviam as histórias do avô sobre o mar, as viagens e os portos distantes.",
  nld: "Alle mensen worden vrij en gelijk in waardigheid en rechten geboren. Zij zijn begiftigd met verstand en geweten, en behoren zich jegens elkander in een geest van broederschap te gedragen. Op een koude ochtend in februari fietste Sanne langs de gracht naar de markt. Daar verkochten boeren kaas, eieren en verse groenten, en een oude man speelde op zijn draaiorgel een liedje.",
  pol: "Wszyscy ludzie rodzą się wolni i równi pod względem swej godności i swych praw. Są oni obdarzeni rozumem i sumieniem i powinni postępować wobec innych w duchu braterstwa. Zażółć gęślą jaźń, powiedział nauczyciel, gdy dzieci ćwiczyły pisanie polskich znaków na tablicy w małej szkole nad rzeką.",
  ces: "Všichni lidé rodí se svobodní a sobě rovní co do důstojnosti a práv. Jsou nadáni rozumem a svědomím a mají spolu jednat v duchu bratrství. Příliš žluťoučký kůň úpěl ďábelské ódy, zatímco děti v zahradě trhaly třešně a babička vařila čaj.",
  hun: "Minden emberi lény szabadon születik és egyenlő méltósága és joga van. Az emberek, ésszel és lelkiismerettel bírván, egymással szemben testvéri szellemben kell hogy viseltessenek. Árvíztűrő tükörfúrógép, írta a mérnök a füzetébe, miközben a tűző napon hűsölő öregek kártyáztak.",
  tur: "Bütün insanlar hür, haysiyet ve haklar bakımından eşit doğarlar. Akıl ve vicdana sahiptirler ve birbirlerine karşı kardeşlik zihniyeti ile hareket etmelidirler. Pijamalı hasta yağız şoföre çabucak güvendi; İstanbul'un ışıkları sabaha kadar yandı.",
  swe: "Alla människor är födda fria och lika i värde och rättigheter. De har utrustats med förnuft och samvete och bör handla gentemot varandra i en anda av broderskap. Flygande bäckasiner söka hwila på mjuka tuvor, medan två små flickor åt smörgås på bryggan.",
  dan: "Alle mennesker er født frie og lige i værdighed og rettigheder. De er udstyret med fornuft og samvittighed, og de bør handle mod hverandre i en broderskabets ånd. Høj bly gom vandt fræk sexquiz på wc, og bagefter spiste de rødgrød med fløde i haven.",
  nor: "Alle mennesker er født frie og med samme menneskeverd og menneskerettigheter. De er utstyrt med fornuft og samvittighet og bør handle mot hverandre i brorskapets ånd. Vår sære Zulu fra badeøya spilte jo whist og quickstep i min taxi.",
  fin: "Kaikki ihmiset syntyvät vapaina ja tasavertaisina arvoltaan ja oikeuksiltaan. Heille on annettu järki ja omatunto, ja heidän on toimittava toisiaan kohtaan veljeyden hengessä. Törkylempijävongahdus kuului järven rannalta, kun pöllö hääti räkättirastaat pois.",
  est: "Kõik inimesed sünnivad vabadena ja võrdsetena oma väärikuselt ja õigustelt. Neile on antud mõistus ja südametunnistus ja nende suhtumist üksteisesse peab kandma vendluse vaim. Põdur Zagrebi tšellomängija-följetonist Ciqo külmetas kehvas garaažis.",
  lav: "Visi cilvēki piedzimst brīvi un vienlīdzīgi savā pašcieņā un tiesībās. Viņi ir apveltīti ar saprātu un sirdsapziņu, un viņiem jāizturas citam pret citu brālības garā. Glāžšķūņa rūķīši dzērumā čiepj Baha koncertflīģeļu vākus.",
  lit: "Visi žmonės gimsta laisvi ir lygūs savo orumu ir teisėmis. Jiems suteiktas protas ir sąžinė ir jie turi elgtis vienas kito atžvilgiu kaip broliai. Įlinkdama fechtuotojo špaga sublykčiojusi pragręžė apvalų arbūzą.",
  slv: "Vsi ljudje se rodijo svobodni in imajo enako dostojanstvo in enake pravice. Obdarjeni so z razumom in vestjo in bi morali ravnati drug z drugim kakor bratje. Šerif bo za vajo spet kuhal domače žgance, je rekla žena čez ograjo.",
  hrv: "Sva ljudska bića rađaju se slobodna i jednaka u dostojanstvu i pravima. Ona su obdarena razumom i sviješću pa jedna prema drugima trebaju postupati u duhu bratstva. Gojazni đačić s biciklom drži hmelj i finu vatu u džepu nošnje.",
  bos: "Sva ljudska bića rađaju se slobodna i jednaka u dostojanstvu i pravima. Ona su obdarena razumom i sviješću i treba da jedno prema drugome postupaju u duhu bratstva. Ljubazni fenjerdžija čađavog lica hoće da mi pokaže štos.",
  cat: "Tots els éssers humans neixen lliures i iguals en dignitat i en drets. Són dotats de raó i de consciència, i han de comportar-se fraternalment els uns amb els altres. Jove xef, porti whisky amb quinze glaçons d'hidrogen, coi! La col·lecció del museu és a l'última planta.",
  glg: "Tódolos seres humanos nacen libres e iguais en dignidade e dereitos e, dotados como están de razón e conciencia, débense comportar fraternalmente uns cos outros. Na aldea, a avoa contaba historias do mar mentres os netos comían castañas á beira do lume.",
  eus: "Gizon-emakume guztiak aske jaiotzen dira, duintasun eta eskubide berberak dituztela; eta ezaguera eta kontzientzia dutenez gero, elkarren artean senide legez jokatu beharra dute. Goizean, arrantzaleak portura itzuli ziren eta herriko plazan jendea biltzen hasi zen.",
  isl: "Hver maður er borinn frjáls og jafn öðrum að virðingu og réttindum. Menn eru gæddir vitsmunum og samvisku, og ber þeim að breyta bróðurlega hverjum við annan. Kæmi ný öxi hér, ykist þjófum nú bæði víl og ádrepa.",
  gle: "Saolaítear na daoine uile saor agus comhionann ina ndínit agus ina gcearta. Tá bua an réasúin agus an choinsiasa acu agus dlíd iad féin d'iompar de mheon bráithreachais i leith a chéile. D'fhuascail Íosa Úrmhac na hÓighe Beannaithe pór Éava agus Ádhaimh.",
  afr: "Alle menslike wesens word vry, met gelyke waardigheid en regte, gebore. Hulle het rede en gewete en behoort in die gees van broederskap teenoor mekaar op te tree. Die ou boer het vroeg opgestaan, koffie gemaak en toe na die skape in die veld gekyk; dit was 'n lang dag.",
  ind: "Semua orang dilahirkan merdeka dan mempunyai martabat dan hak-hak yang sama. Mereka dikaruniai akal dan hati nurani dan hendaknya bergaul satu sama lain dalam semangat persaudaraan. Pagi itu pasar sudah ramai; pedagang menjual sayur, ikan, dan buah-buahan segar.",
  msa: "Semua manusia dilahirkan bebas dan samarata dari segi kemuliaan dan hak-hak. Mereka mempunyai pemikiran dan perasaan hati dan hendaklah bertindak di antara satu sama lain dengan semangat persaudaraan. Di kampung, kanak-kanak bermain layang-layang di tepi sawah.",
  lat: "Omnes homines dignitate et iure liberi et pares nascuntur. Ratione conscientiaque praediti sunt et alii erga alios cum fraternitate se gerere debent. Gallia est omnis divisa in partes tres, quarum unam incolunt Belgae, aliam Aquitani, tertiam qui ipsorum lingua Celtae appellantur.",
  sqi: "Të gjithë njerëzit lindin të lirë dhe të barabartë në dinjitet dhe në të drejta. Ata kanë arsye dhe ndërgjegje dhe duhet të sillen ndaj njëri-tjetrit me frymë vëllazërimi. Në mëngjes, peshkatarët dolën në det dhe gratë përgatitën bukë të ngrohtë për fëmijët.",
  mlt: "Il-bnedmin kollha jitwieldu ħielsa u ugwali fid-dinjità u d-drittijiet. Huma mogħnija bir-raġuni u bil-kuxjenza u għandhom iġibu ruħhom ma' xulxin bi spirtu ta' aħwa. Filgħodu l-ħut ġie mibjugħ fis-suq ta' Marsaxlokk qrib il-knisja.",
  swa: "Watu wote wamezaliwa huru, hadhi na haki zao ni sawa. Wote wamejaliwa akili na dhamiri, hivyo yapasa watendeane kindugu. Asubuhi wavuvi walirudi pwani na samaki wengi, na watoto walikimbia kuwapokea kwa furaha kubwa.",
  fil: "Ang lahat ng tao'y isinilang na malaya at pantay-pantay sa karangalan at mga karapatan. Sila'y pinagkalooban ng katwiran at budhi at dapat magpalagayan ang isa't isa sa diwa ng pagkakapatiran. Sa umaga, nagtitinda ang mga tindera ng mainit na pandesal sa kanto.",
  chi_sim:
    "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以兄弟关系的精神相对待。清晨的城市还没有完全醒来，街道两旁的早餐店已经冒出热气。老人们在公园里打太极拳，学生背着书包匆匆走过，公交车一辆接一辆地驶向远方。",
  chi_tra:
    "人人生而自由，在尊嚴和權利上一律平等。他們賦有理性和良心，並應以兄弟關係的精神相對待。清晨的城市還沒有完全醒來，街道兩旁的早餐店已經冒出熱氣。老人們在公園裡打太極拳，學生背著書包匆匆走過，公車一輛接一輛地駛向遠方。",
  jpn: "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。人間は、理性と良心とを授けられており、互いに同胞の精神をもって行動しなければならない。朝の駅はいつも混雑している。会社員は新聞を読みながら電車を待ち、学生たちはスマートフォンで音楽を聴いている。窓の外には富士山が小さく見えた。",
  // Read by Tesseract (the scripts the ONNX recognisers lack): Articles 1 and 3, as in
  // crates/script_pages.rs.
  rus: "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и совестью и должны поступать в отношении друг друга в духе братства. Каждый человек имеет право на жизнь, на свободу и на личную неприкосновенность.",
  ell: "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα. Είναι προικισμένοι με λογική και συνείδηση, και οφείλουν να συμπεριφέρονται μεταξύ τους με πνεύμα αδελφοσύνης.",
  ara: "يولد جميع الناس أحرارا متساوين في الكرامة والحقوق. وقد وهبوا عقلا وضميرا وعليهم أن يعامل بعضهم بعضا بروح الإخاء. لكل فرد الحق في الحياة والحرية وسلامة شخصه.",
  heb: "כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם. כולם חוננו בתבונה ובמצפון, לפיכך חובה עליהם לנהוג איש ברעהו ברוח של אחווה. כל אדם יש לו הזכות לחיים, לחירות ולביטחון אישי.",
  hin: "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है। उन्हें बुद्धि और अन्तरात्मा की देन प्राप्त है और परस्पर उन्हें भाईचारे के भाव से बर्ताव करना चाहिए।",
  tha: "มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิทธิ ต่างมีเหตุผลและมโนธรรม และควรปฏิบัติต่อกันด้วยเจตนารมณ์แห่งภราดรภาพ",
  kor: "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 인간은 천부적으로 이성과 양심을 부여받았으며 서로 형제애의 정신으로 행동하여야 한다.",
};

/** Languages written right to left (their sections are set `dir=rtl`). */
export const rtlLanguages = new Set(["ara", "heb", "fas", "urd"]);

/** Languages written without spaces between words (CER ignores whitespace for them). */
export const cjkLanguages = new Set(["jpn", "chi_sim", "chi_tra"]);

const fonts: Record<string, string> = {
  jpn: "Noto Serif CJK JP",
  chi_sim: "Noto Sans CJK SC",
  chi_tra: "Noto Serif CJK TC",
  ara: "Noto Naskh Arabic",
  heb: "Noto Sans Hebrew",
  hin: "Noto Sans Devanagari",
  tha: "Noto Sans Thai",
  kor: "Noto Sans CJK KR",
};

/** The page's text in reading order: the passage at 13 pt, then again at 10 pt. */
export function pageText(lang: string): string {
  const t = langTexts[lang]!;
  return `${t}\n${t}`;
}

function html(langs: string[]): string {
  const pages = langs.map((l, i) => {
    const font = fonts[l] ?? (i % 2 ? "Noto Sans" : "Noto Serif");
    const t = langTexts[l]!;
    const dir = rtlLanguages.has(l) ? ' dir="rtl"' : "";
    return `<section${dir} style="font-family:'${font}'"><p style="font-size:13pt">${t}</p><p style="font-size:10pt">${t}</p></section>`;
  });
  return `<!doctype html><html><head><meta charset="utf-8"><style>@page{size:A4;margin:22mm}section{page-break-after:always;line-height:1.5;hyphens:none;text-align:left}p{margin:0 0 8mm 0}</style></head><body>${pages.join("")}</body></html>`;
}

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mild scan degradation of a grey raster: a light blur, Gaussian noise (sigma 12 grey
 * levels) and about one speck per 2,000 pixels. Deterministic per seed. */
export function degrade(px: Uint8Array, w: number, h: number, seed: number): Uint8Array {
  const r = rng(seed);
  const out = new Uint8Array(px.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      // Blur: half the pixel, half its 4 neighbours' mean.
      const n =
        (px[i - (x > 0 ? 1 : 0)]! +
          px[i + (x < w - 1 ? 1 : 0)]! +
          px[i - (y > 0 ? w : 0)]! +
          px[i + (y < h - 1 ? w : 0)]!) /
        4;
      let v = 0.5 * px[i]! + 0.5 * n;
      // Box-Muller Gaussian.
      v += 12 * Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
      if (r() < 0.0005) v = r() < 0.5 ? 0 : 255;
      out[i] = Math.max(0, Math.min(255, Math.round(v)));
    }
  }
  return out;
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** An 8-bit grey PNG with a pHYs chunk for `dpi`. */
export function greyPng(px: Uint8Array, w: number, h: number, dpi: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // grey
  const raw = Buffer.alloc((w + 1) * h);
  for (let y = 0; y < h; y++) raw.set(px.subarray(y * w, (y + 1) * w), y * (w + 1) + 1);
  const phys = Buffer.alloc(9);
  const ppm = Math.round(dpi / 0.0254);
  phys.writeUInt32BE(ppm, 0);
  phys.writeUInt32BE(ppm, 4);
  phys[8] = 1;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("pHYs", phys),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** Reads a binary PGM (P5, 8-bit) as pdftoppm -gray writes it. */
export function readPgm(path: string): { px: Uint8Array; w: number; h: number } {
  const buf = readFileSync(path);
  const header: string[] = [];
  let i = 0;
  while (header.length < 4) {
    while (/\s/.test(String.fromCharCode(buf[i]!))) i++;
    let tok = "";
    while (!/\s/.test(String.fromCharCode(buf[i]!))) tok += String.fromCharCode(buf[i++]!);
    header.push(tok);
  }
  i++;
  const [magic, w, h] = [header[0], Number(header[1]), Number(header[2])];
  if (magic !== "P5") throw new Error(`${path}: not a binary PGM`);
  return { px: new Uint8Array(buf.buffer, buf.byteOffset + i, w * h), w, h };
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr}`);
}

/** Renders one page per language into `dir` and returns `{lang, png, text}` per page:
 * a `dpi` grey PNG (degraded unless `clean`) and the reference text. One Chromium run. */
export function renderLangPages(
  dir: string,
  langs: string[],
  opts: { dpi?: number; clean?: boolean } = {},
): { lang: string; png: string; text: string }[] {
  const dpi = opts.dpi ?? 300;
  mkdirSync(dir, { recursive: true });
  const htmlPath = join(dir, "pages.html");
  const pdfPath = join(dir, "pages.pdf");
  writeFileSync(htmlPath, html(langs));
  run("chromium", [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-pdf-header-footer",
    `--print-to-pdf=${pdfPath}`,
    htmlPath,
  ]);
  return langs.map((lang, i) => {
    const stem = join(dir, `${lang}`);
    run("pdftoppm", [
      "-r",
      String(dpi),
      "-gray",
      "-f",
      String(i + 1),
      "-l",
      String(i + 1),
      "-singlefile",
      pdfPath,
      stem,
    ]);
    const { px, w, h } = readPgm(`${stem}.pgm`);
    const png = `${stem}.png`;
    writeFileSync(png, greyPng(opts.clean ? px : degrade(px, w, h, 1000 + i), w, h, dpi));
    return { lang, png, text: pageText(lang) };
  });
}
